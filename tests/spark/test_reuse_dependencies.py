"""--reuse never answers a changed pipeline with an old result: each kind of thing an
operator's behaviour depends on, changed between two runs of one cell in a real IPython
shell, makes the second run compute (with the new, correct result and ``reused_from``
None) and ``run.diff`` name the change; an irrelevant change is still reused."""
import os
import textwrap

import pytest

import icedtea_jupyter

pytestmark = pytest.mark.spark

XS = [0, 2, 4, 8, 12, 13, 14, 30, 31, 50, 51, 52, 90, 100, 130, 131] * 3
GAP_CLASS = """
import icedtea_jupyter as it
class Gap(it.Operator):
    GAP = {gap}
    def open(self):
        self.last = None
    def process(self, x):
        new = self.last is None or x - self.last > self.GAP
        self.last = x
        yield (1 if new else 0)
"""
GAP_CELL = "n_sessions = sum(sc.parallelize(XS, 2).mapPartitions(Gap()).setName('gap').collect())"


def sessions(xs, gap, partitions=2):
    """The oracle: Gap over each of parallelize's slices in plain Python."""
    total, size = 0, len(xs)
    for p in range(partitions):
        last = None
        for x in xs[p * size // partitions:(p + 1) * size // partitions]:
            total += last is None or x - last > gap
            last = x
    return total


@pytest.fixture
def cell(shell, tmp_path):
    """``cell(code, cell_id)``: ``code`` run as a ``%%icedtea --wait --reuse`` cell; its Run."""
    shell.user_ns["XS"] = XS

    def run(code, cell_id="gap", extra=""):
        shell.run_cell_magic("icedtea", f"--wait --no-panel --reuse --cell {cell_id} "
                             f"--store {tmp_path / 'runs'} {extra}", code)
        return icedtea_jupyter.last_run()

    return run


def define(shell, code):
    result = shell.run_cell(textwrap.dedent(code))
    result.raise_error()


def test_a_changed_class_attribute_is_recomputed_and_named(shell, cell):
    define(shell, GAP_CLASS.format(gap=10))
    first = cell(GAP_CELL)
    assert shell.user_ns["n_sessions"] == sessions(XS, 10) and first.reused_from is None
    again = cell(GAP_CELL)
    assert again.reused_from == first.id  # nothing changed: reused
    shell.run_cell("Gap.GAP = 3").raise_error()
    changed = cell(GAP_CELL)
    assert changed.reused_from is None
    assert shell.user_ns["n_sessions"] == sessions(XS, 3) != sessions(XS, 10)
    assert changed.diff(first).values == {"gap": ["Gap.GAP: 10 → 3"]}
    assert "Gap.GAP: 10 → 3" in changed.versions()["changed"].iloc[-1]


def test_a_class_defined_again_with_another_constant_is_recomputed(shell, cell):
    define(shell, GAP_CLASS.format(gap=10))
    first = cell(GAP_CELL, "redefined")
    define(shell, GAP_CLASS.format(gap=5))  # a new cell defines the class again
    second = cell(GAP_CELL, "redefined")
    assert second.reused_from is None and shell.user_ns["n_sessions"] == sessions(XS, 5)
    assert second.diff(first).values == {"gap": ["Gap.GAP: 10 → 5"]}


def test_an_instance_attribute_and_a_base_class_attribute_are_dependencies(shell, cell):
    define(shell, """
        import icedtea_jupyter as it
        class Base(it.Operator):
            STEP = 2
        class Scale(Base):
            def __init__(self, factor):
                self.factor = factor
            def process(self, x):
                yield x * self.factor + self.STEP
    """)
    code = "out = sc.parallelize(XS, 2).mapPartitions(Scale(F)).setName('scale').collect()"
    shell.user_ns["F"] = 2
    first = cell(code, "scale")
    shell.user_ns["F"] = 3
    second = cell(code, "scale")
    assert second.reused_from is None and shell.user_ns["out"] == [x * 3 + 2 for x in XS]
    assert second.diff(first).values == {"scale": ["self.factor: 2 → 3"]}
    shell.run_cell("Base.STEP = 5").raise_error()  # through the MRO
    third = cell(code, "scale")
    assert third.reused_from is None and shell.user_ns["out"] == [x * 3 + 5 for x in XS]
    assert third.diff(second).values == {"scale": ["Base.STEP: 2 → 5"]}


def test_closures_defaults_globals_and_methods_are_dependencies(shell, cell):
    define(shell, """
        def scaled(k):
            return lambda x: x * k
        def shifted(x, by=1):
            return x + by
        LIMIT = 20
        def helper(x):
            return x > LIMIT
    """)
    code = ("out = (sc.parallelize(XS, 2).map(scaled(K)).setName('scale').map(shifted)"
            ".setName('shift').filter(helper).setName('keep').collect())")
    shell.user_ns["K"] = 2
    base = cell(code, "fns")

    def expect(k, by, limit):
        return [x * k + by for x in XS if x * k + by > limit]

    assert shell.user_ns["out"] == expect(2, 1, 20)
    shell.user_ns["K"] = 3  # a closure value
    closure = cell(code, "fns")
    assert closure.reused_from is None and shell.user_ns["out"] == expect(3, 1, 20)
    assert closure.diff(base).values == {"scale": ["k: 2 → 3"]}
    define(shell, "def shifted(x, by=4):\n    return x + by\n")  # a default argument
    default = cell(code, "fns")
    assert default.reused_from is None and shell.user_ns["out"] == expect(3, 4, 20)
    assert default.diff(closure).values == {"shift": ["default by: 1 → 4"]}
    shell.run_cell("LIMIT = 60").raise_error()  # a global a function called reads
    read = cell(code, "fns")
    assert read.reused_from is None and shell.user_ns["out"] == expect(3, 4, 60)
    assert read.diff(default).values == {"keep": ["LIMIT: 20 → 60"]}


def test_a_comment_or_a_local_renamed_is_still_reused(shell, cell):
    define(shell, """
        import icedtea_jupyter as it
        class Running(it.Operator):
            def open(self):
                self.total = 0
            def process(self, x):
                step = x * 2
                self.total += step
                yield self.total
    """)
    code = "out = sc.parallelize(XS, 2).mapPartitions(Running()).setName('run').collect()"
    first = cell(code, "comment")
    define(shell, """
        import icedtea_jupyter as it
        class Running(it.Operator):
            # the running total of twice each record
            def open(self):
                self.total = 0  # per partition
            def process(self, x):
                doubled = x * 2
                self.total += doubled
                yield self.total
    """)
    second = cell(code, "comment")
    assert second.reused_from == first.id


def test_a_changed_sql_setting_is_recomputed_and_named(shell, cell, spark):
    code = ("out = spark.createDataFrame([(1, 'a'), (2, 'b')], 'n long, s string')"
            ".selectExpr('n', 's').collect()")
    first = cell(code, "setting")
    spark.conf.set("spark.sql.caseSensitive", "true")
    try:
        second = cell(code, "setting")
    finally:
        spark.conf.unset("spark.sql.caseSensitive")
    assert second.reused_from is None
    assert second.diff(first).settings == ["spark.sql.caseSensitive: (none) → true"]
    assert "setting spark.sql.caseSensitive" in second.diff(first).summary()


def test_a_changed_source_file_is_recomputed(shell, cell, tmp_path):
    path = tmp_path / "lines.txt"
    path.write_text("a\nb\n")
    shell.user_ns["PATH"] = str(path)
    code = "out = sc.textFile(PATH, 2).map(lambda s: s.upper()).setName('up').collect()"
    first = cell(code, "file")
    assert shell.user_ns["out"] == ["A", "B"]
    path.write_text("a\nb\nc\n")
    os.utime(path, ns=(1, 1))  # the size changed; the time too
    second = cell(code, "file")
    assert second.reused_from is None and shell.user_ns["out"] == ["A", "B", "C"]
    assert first.reused_from is None


def test_what_cannot_be_fingerprinted_is_computed_with_a_note(shell, cell):
    define(shell, """
        import threading
        import icedtea_jupyter as it
        class Locked(it.Operator):
            def __init__(self):
                self.lock = threading.Lock()
            def __getstate__(self):
                return {}
            def process(self, x):
                yield x + 1
    """)
    code = "out = sc.parallelize(XS, 2).mapPartitions(Locked()).setName('locked').collect()"
    cell(code, "unknown")
    second = cell(code, "unknown")
    assert second.reused_from is None and shell.user_ns["out"] == [x + 1 for x in XS]
    [result] = second.results
    assert any("cannot be fingerprinted" in b for b in result["blockers"])
    assert any("not reused" in note and "cannot be fingerprinted" in note
               for note in second.manifest["notes"])


def test_an_identical_dataframe_rerun_is_reused_and_named_unchanged(shell, cell):
    code = ("from pyspark.sql import functions as F\n"
            "df = spark.createDataFrame([(1, 'a'), (2, 'b'), (3, 'a')], 'n long, s string')\n"
            "out = (df.withColumn('m', F.col('n') * 2).withColumn('t', F.upper('s'))"
            ".filter(F.col('m') > 2).collect())")
    first = cell(code, "frame")
    second = cell(code, "frame")
    assert second.reused_from == first.id
    change = second.diff(first)
    assert (change.changed, change.values, change.settings) == ({}, {}, [])
    assert change.summary() in ("nothing", "code (same operators)")
