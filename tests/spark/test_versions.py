"""Versions and reuse (Drove): fingerprints, results stored once, --reuse."""
import os

import pandas as pd
import pytest

pytestmark = pytest.mark.spark

ROWS = [("ann", 120.0, 3), ("bob", 5000.0, 1), ("cy", 40.0, 7), ("dee", 980.0, 2)] * 5


@pytest.fixture
def store(tmp_path):
    return str(tmp_path / "runs")


def test_runs_of_one_cell_are_its_versions(record, store):
    cell = "out = sc.parallelize(range(20), 2).map(lambda x: x * FACTOR).collect()"
    first = record(cell, {"FACTOR": 2}, store=store, cell_id="c1")
    second = record(cell, {"FACTOR": 3}, store=store, cell_id="c1")
    other = record("n = sc.parallelize(range(5)).count()", store=store, cell_id="c2")
    assert (first.version, second.version, other.version) == ("cell 1, v1", "cell 1, v2",
                                                              "cell 2, v1")
    assert second.namespace["out"] == [3 * x for x in range(20)]
    table = second.versions()
    assert list(table["version"]) == ["cell 1, v1", "cell 1, v2"]
    assert list(table["run"]) == [first.id, second.id]
    assert table["changed"][1] == "map: globals read (FACTOR: 2 → 3)"
    assert table["same result as"].isna().all()
    change = second.diff(first)
    assert change.changed == {"map": ["globals read"]} and not change.added
    [result] = change.results
    assert not result.same
    assert set(result.only_here["value"]) == {str(3 * x) for x in range(20)} - \
        {str(2 * x) for x in range(20)}


def test_equal_results_are_stored_once_and_outlive_a_deleted_version(record, store):
    cell = "out = sc.parallelize(ROWS, 2).filter(lambda r: r[1] > LIMIT).collect()"
    a = record(cell, {"ROWS": ROWS, "LIMIT": 100}, store=store, cell_id="c")
    b = record(cell, {"ROWS": ROWS, "LIMIT": 110}, store=store, cell_id="c")  # same rows kept
    [ra], [rb] = a.results, b.results
    assert ra["digest"] == rb["digest"] and ra["sink"] != rb["sink"]
    path = os.path.join(store, ".results", ra["digest"] + ".arrow")
    assert pd.read_feather(path).shape[0] == len([r for r in ROWS if r[1] > 100])
    assert b.versions()["same result as"][1] == "cell 1, v1"
    import icedtea_jupyter

    usage = icedtea_jupyter.store_usage(store)
    assert usage.attrs["total"] == os.path.getsize(path)
    assert list(usage["shared with"]) == [["cell 1, v2"], ["cell 1, v1"]]
    assert a.delete() == []  # b still points to the result
    assert os.path.exists(path)
    assert b.delete() == [ra["digest"]] and not os.path.exists(path)


def test_a_run_deleted_as_it_ends_waits_for_its_stages_loads(record, store, monkeypatch):
    """When a run ends, a thread writes its JVM stages' loads into its folder; deleting
    the run meanwhile waits for it (rmtree under a file being written failed in CI)."""
    import time

    from icedtea_jupyter.session import stage_loads

    written = []
    write = stage_loads.write_stage_tasks

    def slow_write(run_path, rows):
        time.sleep(1.0)
        write(run_path, rows)
        written.append(run_path)

    monkeypatch.setattr(stage_loads, "write_stage_tasks", slow_write)
    cell = "out = sc.parallelize(ROWS, 2).filter(lambda r: r[1] > 100).collect()"
    run = record(cell, {"ROWS": ROWS}, store=store, cell_id="d")
    assert not run.stage_tasks_kept.is_set()  # still writing
    run.delete()
    assert written == [run.path] and not os.path.exists(run.path)


FRAME = ("df = spark.createDataFrame(ROWS, 'name string, amount double, n long')\n")


def _reuse(record, store, first, second, namespace=None):
    ns = {"ROWS": ROWS, **(namespace or {})}
    a = record(first, dict(ns), store=store, cell_id="c", reuse=True)
    b = record(second, dict(ns), store=store, cell_id="c", reuse=True)
    assert a.status == b.status == "finished", (a.error, b.error)
    return a, b


def _assert_reused(a, b, reason):
    assert b.reused_from == a.id
    assert b.manifest["jobs"] == []  # Spark ran nothing
    assert b.namespace["out"] == a.namespace["out"]
    assert reason in b.results[0]["reason"]
    assert any(f"answered from {a.version}" in note for note in b.manifest["notes"])


def test_an_identical_version_is_answered_from_the_stored_result(record, store):
    cell = "out = sc.parallelize(ROWS, 2).map(lambda r: (r[0], r[1] * 2)).collect()"
    a, b = _reuse(record, store, cell, cell)
    _assert_reused(a, b, "same operators, same sources")
    assert a.reused_from is None and a.manifest["jobs"]
    assert b.versions()["reused from"][1] == a.version


def test_an_identical_dataframe_version_has_the_same_fingerprint(record, store):
    cell = FRAME + "out = df.selectExpr('name', 'n % 2 AS odd').filter('odd = 1').collect()"
    a, b = _reuse(record, store, cell, cell)
    _assert_reused(a, b, "same operators, same sources")
    assert a.results[0]["sink"] == b.results[0]["sink"]


def test_reordered_dataframe_filters_are_reused(record, store):
    a, b = _reuse(record, store,
                  FRAME + "out = df.filter('amount > 100').filter('n < 5').collect()",
                  FRAME + "out = df.filter('n < 5').filter('amount > 100').collect()")
    _assert_reused(a, b, "proven by z3")
    assert [r.name for r in b.namespace["out"]] == ["ann", "bob", "dee"] * 5
    assert b.diff(a).changed == {"filter": ["DataFrame plan"], "filter#2": ["DataFrame plan"]}


def test_a_conjunction_in_another_order_is_the_same_plan_to_spark(record, store):
    a, b = _reuse(record, store,
                  FRAME + "out = df.filter('amount > 100 and n < 5').toPandas()",
                  FRAME + "out = df.filter('n < 5 and amount > 100').toPandas()")
    assert b.reused_from == a.id and "sameSemantics" in b.results[0]["reason"]
    pd.testing.assert_frame_equal(b.namespace["out"], a.namespace["out"])


def test_a_projection_pushed_through_a_filter_is_reused(record, store):
    a, b = _reuse(record, store,
                  FRAME + "out = df.select('name', 'n').filter('n >= 2').collect()",
                  FRAME + "out = df.filter('n > 1').select('name', 'n').collect()")
    _assert_reused(a, b, "proven by z3")


@pytest.mark.parametrize("first, second", [
    ("df.filter('n > 1')", "df.filter('n >= 1')"),  # one more row
    ("df.filter('amount > 100 or not amount > 100')", "df"),  # null amounts differ
    ("df.select('name', 'n')", "df.select('n', 'name')"),  # columns in another order
])
def test_reuse_does_not_lie_about_plans_that_differ(record, store, first, second):
    rows = ROWS + [("eve", None, 4)]
    a, b = _reuse(record, store, FRAME + f"out = {first}.collect()",
                  FRAME + f"out = {second}.collect()", {"ROWS": rows})
    assert b.reused_from is None and b.manifest["jobs"]


def test_a_changed_closure_constant_is_not_reused(record, store):
    make = "def scale(k):\n    return lambda r: r[1] * k\n"
    a, b = _reuse(record, store,
                  make + "out = sc.parallelize(ROWS, 2).map(scale(2)).collect()",
                  make + "out = sc.parallelize(ROWS, 2).map(scale(3)).collect()")
    assert b.reused_from is None and b.namespace["out"] == [r[1] * 3 for r in ROWS]
    assert b.diff(a).changed == {"map": ["closure values"]}


def test_a_changed_source_file_is_not_reused(record, store, tmp_path):
    data = tmp_path / "words.txt"
    data.write_text("a b\nc\n")
    cell = f"out = sc.textFile({str(data)!r}).flatMap(lambda l: l.split()).collect()"
    a = record(cell, store=store, cell_id="c", reuse=True)
    data.write_text("a b\nc d e\n")
    os.utime(data, ns=(os.stat(data).st_atime_ns, os.stat(data).st_mtime_ns + 10**9))
    b = record(cell, store=store, cell_id="c", reuse=True)
    assert b.reused_from is None and b.namespace["out"] == ["a", "b", "c", "d", "e"]
    change = b.diff(a)
    assert change.sources == [next(n for n in change.changed if n.startswith("textFile"))]
    c = record(cell, store=store, cell_id="c", reuse=True)  # the file as b read it
    assert c.reused_from == b.id


def test_a_random_udf_is_never_reused(record, store):
    cell = ("import random\nfrom pyspark.sql.functions import udf\n"
            "noisy = udf(lambda a: a + random.random(), 'double')\n"
            + FRAME + "out = df.select(noisy('amount').alias('x')).collect()")
    a, b = _reuse(record, store, cell, cell)
    assert b.reused_from is None and b.manifest["jobs"]
    assert any("random" in why for why in b.results[0]["blockers"])


def test_the_sidebar_gets_versions_a_diff_and_an_export_over_the_comm(record, store, tmp_path,
                                                                     monkeypatch):
    from icedtea_jupyter.comm.schema import check_result
    from icedtea_jupyter.comm.target import handle
    from icedtea_jupyter.session import registry

    # no run is being debugged (other tests' debuggers share this process): the export
    # is the selected run's (test_export_reruns.py: the debugged run's when there is one)
    monkeypatch.setattr(registry, "debugged_run", lambda: None)

    cell = "out = sc.parallelize(ROWS, 2).filter(lambda r: r[2] > LIMIT).count()"
    a = record(cell, {"ROWS": ROWS, "LIMIT": 1}, store=store, cell_id="c")
    b = record(cell, {"ROWS": ROWS, "LIMIT": 2}, store=store, cell_id="c")

    def ask(method, **params):
        reply = handle({"kind": "request", "id": 1, "method": method, "params": params})
        assert reply["ok"], reply
        assert check_result(method, reply["result"]) == []
        return reply["result"]

    rows = ask("versions.list", run=b.id)["versions"]
    assert [(r["version"], r["changed"]) for r in rows] == [
        ("cell 1, v1", "first version"), ("cell 1, v2", "filter: globals read (LIMIT: 1 → 2)")]
    change = ask("versions.diff", run=b.id, other=a.id)
    assert change["changed"] == {"filter": ["globals read"]}
    assert change["results"][0]["same"] is False and a.namespace["out"] == 15
    assert change["counts"] == [{"operator": "filter", "here_in": 20, "here_out": 10,
                                 "there_in": 20, "there_out": 15}]
    exported = ask("run.export", run=b.id, path=str(tmp_path / "b.ipynb"))
    assert os.path.exists(exported["path"]) and any("not recorded from a notebook cell" in h
                                                    for h in exported["hand"])
    reply = handle({"kind": "request", "id": 2, "method": "run.export",
                    "params": {"run": b.id, "path": str(tmp_path / "b.txt")}})
    assert not reply["ok"] and "must end in .ipynb" in reply["error"]["message"]


def test_a_write_is_noted_by_its_path_and_never_answered(record, store, tmp_path):
    target = str(tmp_path / "out.parquet")
    cell = FRAME + f"df.filter('n > 1').write.mode('overwrite').parquet({target!r})"
    a, b = _reuse(record, store, cell, cell)
    for run in (a, b):
        [write] = run.results
        assert (write["kind"], write["path"], write["reusable"]) == ("write", target, False)
        assert run.manifest["jobs"]  # the write ran both times
    assert b.reused_from is None
    assert len(pd.read_parquet(target)) == len([r for r in ROWS if r[2] > 1])


def test_a_version_fingerprinted_while_spark_ran_answers_a_later_reuse(record, store):
    """Without --reuse the sinks are fingerprinted in the background during the action's
    job; what that stores (the exact and the canonical plan) answers a later --reuse run,
    and operators built after the action do not count in its sink."""
    first = FRAME + ("out = df.filter('amount > 100 and n < 5').collect()\n"
                     "later = sc.parallelize(range(4)).map(lambda x: x + 1).collect()")
    second = FRAME + "out = df.filter('n < 5 and amount > 100').collect()"
    a = record(first, {"ROWS": ROWS}, store=store, cell_id="c")
    assert a.status == "finished", a.error
    assert a.results[0]["sink"] and a.results[0]["canonical"]
    assert a.manifest["fingerprint_background_seconds"] > 0
    b = record(second, {"ROWS": ROWS}, store=store, cell_id="c", reuse=True)
    _assert_reused(a, b, "sameSemantics")


def test_a_literal_that_prints_like_a_column_is_not_answered_from_the_quick_key(record,
                                                                                store):
    """--reuse searches by the plan's tree string, where a string literal prints like a
    column: a literal 'name#<id of n>' gives the same quick key as the column n, and
    only the exact plan (JSON), computed for that candidate, tells them apart."""
    rows = [("1", 1.0, 1), ("x", 2.0, 3)]
    a, b = _reuse(
        record, store, FRAME + "out = df.filter(df.name == df.n.cast('string')).collect()",
        FRAME + "import re\nfrom pyspark.sql import functions as F\n"
                "leaf = df._jdf.queryExecution().analyzed().treeString()\n"
                "n_id = re.search(r'n#(\\d+)L', leaf).group(1)\n"
                "fake = F.lit(f'cast(n#{n_id}L as string)')\n"
                "out = df.filter(df.name == fake).collect()", {"ROWS": rows})
    assert a.results[0]["quick"] == b.results[0]["quick"]  # the search found a candidate
    assert a.results[0]["sink"] != b.results[0]["sink"]
    assert b.reused_from is None and b.manifest["jobs"]
    assert [r.name for r in a.namespace["out"]] == ["1"] and b.namespace["out"] == []


def test_a_parallelized_list_is_hashed_once_a_run_while_spark_runs(record, store,
                                                                    monkeypatch):
    """A list the cell parallelizes is fingerprinted by its content, once: in the
    background while the action's job runs, and the manifest's parts at the run's end
    reuse it (hashing a large list again made every recorded run end later)."""
    from icedtea_jupyter.versions import fingerprint

    lines = [f"line {i}" for i in range(5000)]
    hashed = []
    bulk = fingerprint._bulk
    monkeypatch.setattr(fingerprint, "_bulk", lambda v: hashed.append(v is lines) or bulk(v))
    cell = "out = sc.parallelize(LINES, 2).map(lambda s: s.upper()).count()"
    a = record(cell, {"LINES": lines}, store=store, cell_id="c")
    assert a.status == "finished", a.error
    assert hashed.count(True) == 1
    lines[7] = "changed"
    b = record(cell, {"LINES": lines}, store=store, cell_id="c")
    assert hashed.count(True) == 2
    source = next(n for n in a.manifest["fingerprints"]
                  if a.manifest["fingerprints"][n]["source"])
    assert b.diff(a).changed == {source: ["arguments"]}  # the list is an argument
