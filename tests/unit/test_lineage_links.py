"""A worker's lineage links (executor/lineage.py) against links computed by hand."""
from array import array

from icedtea_jupyter.executor.lineage import Links
from icedtea_jupyter.executor.lineage_jobs import KeyIndex, Picker


def expand(links) -> set[tuple[int, int, int, int]]:
    """Every (output, input, input partition, input position) pair the links say."""
    columns = (links if hasattr(links, "to_pydict") else links.table()).to_pydict()
    pairs = set()
    for row in zip(*(columns[c] for c in ("out_start", "out_count", "input", "in_part",
                                           "in_start", "in_count", "cross"))):
        out_start, out_count, index, part, in_start, in_count, cross = row
        if cross:
            pairs |= {(o, index, part, i) for o in range(out_start, out_start + out_count)
                      for i in range(in_start, in_start + in_count)}
        else:
            assert out_count == in_count
            pairs |= {(out_start + k, index, part, in_start + k) for k in range(out_count)}
    return pairs


def test_a_filter_links_each_kept_input_to_its_output():
    links = Links(3)
    links.kept(array("q", [1, 2, 5]), 7)  # inputs 0..6, 1, 2 and 5 dropped
    assert expand(links) == {(0, 0, 3, 0), (1, 0, 3, 3), (2, 0, 3, 4), (3, 0, 3, 6)}


def test_a_flatmap_links_every_output_of_an_input_to_it():
    links = Links(0)
    # inputs 0..4 with 1, 3, 0, 1, 2 outputs: the log holds those other than one
    links.deviations(array("q", [1, 3, 2, 0, 4, 2]), 5, 7)
    assert expand(links) == {(0, 0, 0, 0), (1, 0, 0, 1), (2, 0, 0, 1), (3, 0, 0, 1),
                                     (4, 0, 0, 3), (5, 0, 0, 4), (6, 0, 0, 4)}


def test_an_operators_closing_outputs_come_from_every_input():
    links = Links(0)
    links.deviations(array("q", []), 2, 3)  # two inputs, one output each, one from close()
    assert expand(links) == {(0, 0, 0, 0), (1, 0, 0, 1), (2, 0, 0, 0), (2, 0, 0, 1)}


def test_a_whole_partition_function_links_outputs_to_the_input_pulled_last():
    links = Links(1)
    # outputs so far when inputs 0, 1, 2, 3 were pulled, then when the input ran out;
    # one output after the end (a flush)
    links.pulls(array("q", [0, 1, 1, 3, 4]), 4, 5)
    assert expand(links) == {(0, 0, 1, 0), (1, 0, 1, 2), (2, 0, 1, 2), (3, 0, 1, 3)} \
        | {(4, 0, 1, i) for i in range(4)}


def test_the_picker_keeps_only_the_positions_asked_for():
    assert list(Picker({0: [1, 3]})(0, iter("abcdef"))) == [(0, 1, "b"), (0, 3, "d")]
    assert list(Picker({0: None})(0, iter("ab"))) == [(0, 0, "a"), (0, 1, "b")]


def capture(api: str, phase: str, inputs: list, outputs: list):
    """A LineageCapture of a reduce side fed ``inputs`` (tagged with their origins, as
    its host's ``Origins`` strips them) and ``outputs``."""
    from types import SimpleNamespace

    from icedtea_jupyter.executor.input_order import Origins
    from icedtea_jupyter.executor.lineage import LineageCapture

    plugin = LineageCapture(SimpleNamespace(spec=SimpleNamespace(api=api, phase=phase)))
    assert not plugin.needs_records(None)  # in blocks: C calls note the keys
    origins = Origins()
    consumed = list(plugin.tap_merge(origins.tap(iter(inputs)), origins))
    list(plugin.partition_outputs(None, iter(outputs)))
    return plugin, consumed


def test_a_map_sides_key_numbers_name_the_combiners_in_the_order_pysparks_merger_outputs():
    # the map side captures nothing per record: a trace numbers its regenerated inputs'
    # keys as first seen, which is the order of PySpark's merger's combiners (no spill)
    from operator import add

    from pyspark.shuffle import Aggregator, ExternalMerger

    from icedtea_jupyter.executor.lineage import FIRST_SEEN, KEY_ORDER, key_order
    from icedtea_jupyter.executor.lineage_jobs import KeyNumbers

    inputs = [("c", 1), ("a", 1), ("b", 1), ("a", 1), ("c", 1), ("d", 1)]
    merger = ExternalMerger(Aggregator(lambda v: v, add, add), 1 << 20)  # MB: no spill
    merger.mergeValues(iter(inputs))
    combiners = [key for key, _ in merger.items()]
    [(part, numbers)] = KeyNumbers()(3, iter(inputs))
    assert part == 3 and [combiners[n] for n in numbers] == [k for k, _ in inputs]
    file = key_order(merger)
    assert len(file) == 0 and file.schema.metadata[KEY_ORDER] == FIRST_SEEN


def test_a_map_side_whose_merger_spilled_says_so(tmp_path, monkeypatch):
    # its combiners come in another order: a trace matches their keys by value
    from operator import add

    from pyspark.shuffle import Aggregator, ExternalMerger

    from icedtea_jupyter.executor.lineage import KEY_ORDER, SPILLED, key_order

    monkeypatch.setenv("SPARK_LOCAL_DIRS", str(tmp_path))
    merger = ExternalMerger(Aggregator(lambda v: v, add, add), 1)  # 1 MB: it spills
    merger.mergeValues((k % 7, 1) for k in range(100))
    assert merger.spills and key_order(merger).schema.metadata[KEY_ORDER] == SPILLED


def test_a_filter_in_blocks_keeps_one_byte_an_input_the_reader_expands_into_runs():
    from icedtea_jupyter.executor.lineage import KEPT, keeping, one_column
    from icedtea_jupyter.lineage.tables import expanded

    kept = bytearray()
    f = keeping(lambda record: record % 3, kept.append)  # truthy, not a bool
    assert list(filter(f, range(7))) == [1, 2, 4, 5]
    table = one_column(KEPT, kept)
    assert table.schema.field(KEPT).type.bit_width == 8
    # inputs 0..6, 0, 3 and 6 dropped
    assert expand(expanded(table, 2)) == {(0, 0, 2, 1), (1, 0, 2, 2), (2, 0, 2, 4),
                                          (3, 0, 2, 5)}


def test_a_flatmap_in_blocks_keeps_its_output_counts_the_reader_expands_into_links():
    from icedtea_jupyter.executor.lineage import OUT_COUNTS, counting, one_column
    from icedtea_jupyter.lineage.tables import expanded

    lengths = array("q")
    f = counting(lambda line: line.split(), lengths.append)
    assert [w for line in ["a b", "", "c", "d e f"] for w in f(line)] == list("abcdef")
    assert expand(expanded(one_column(OUT_COUNTS, lengths), 1)) == {
        (0, 0, 1, 0), (1, 0, 1, 0), (2, 0, 1, 2), (3, 0, 1, 3), (4, 0, 1, 3), (5, 0, 1, 3)}
    wide = one_column(OUT_COUNTS, array("q", [70_000, 1]))
    assert wide.schema.field(OUT_COUNTS).type.bit_width == 32


def test_a_run_recorded_before_finds_a_map_sides_links_by_key():
    [(part, index)] = KeyIndex()(2, iter([("a", 1), ("b", 1), ("a", 1)]))
    assert part == 2 and {k: list(v) for k, v in index.items()} == {"a": [0, 2], "b": [1]}


def test_a_reduce_side_links_every_output_of_a_key_to_each_combiner_of_it():
    # an aggregation's combiners: (key, (map partition, position, combiner))
    combiners = [("k", (0, 4, 1)), ("j", (1, 0, 2)), ("k", (1, 2, 3))]
    plugin, consumed = capture("reduceByKey", "merge", combiners, [("k", 4)])
    assert consumed == [("k", 1), ("j", 2), ("k", 3)]
    assert expand(plugin.links(0, 3, 1)) == {(0, 0, 0, 4), (0, 0, 1, 2)}  # "j": no output


def test_a_joins_reduce_side_keeps_its_outputs_keys_and_says_it_links_by_key():
    from types import SimpleNamespace

    from icedtea_jupyter.executor.lineage import KEY, LINKED_BY, LineageCapture, by_key

    plugin = LineageCapture(SimpleNamespace(spec=SimpleNamespace(api="join", phase="")))
    outputs = [("k", ("x", "z")), ("k", ("y", "z")), ("j", ("w", "v"))]
    assert not plugin.needs_records(None)
    assert list(plugin.partition_outputs(None, iter(outputs))) == outputs
    assert list(plugin.out_keys) == [0, 0, 1] and len(plugin.in_keys) == 0
    file = by_key(plugin.out_keys, list(plugin.keys))
    assert file.column("key").to_pylist() == ["k", "k", "j"]
    assert file.schema.metadata[LINKED_BY] == KEY
    tuples = by_key(plugin.out_keys, [("k", 1), ("j", 2)])  # not plain: no rows
    assert len(tuples) == 0 and tuples.schema.metadata[LINKED_BY] == KEY


def test_writing_links_in_a_worker_does_not_import_pandas(tmp_path):
    import subprocess
    import sys

    code = ("import sys; from array import array; "
            "from icedtea_jupyter.executor.lineage import Links, one_column, write_links; "
            "one_column('out_counts', array('q', [2, 0, 1])); "
            "links = Links(0); links.kept(array('q', [1]), 3); "
            "from icedtea_jupyter.executor.lineage import key_column; "
            "key_column(array('I', [0, 1, 0]), ['a', 'b']); "
            "key_column(array('I', [0, 1]), [7, 8]); "
            f"write_links({str(tmp_path / 'l.arrow')!r}, links.table()); "
            "print('pandas' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
    import pyarrow.feather as feather

    assert feather.read_table(tmp_path / "l.arrow").to_pydict()["in_start"] == [0, 2]


def hosted_links(monkeypatch, tmp_path, api: str, f, inputs: list) -> tuple[list, list, set]:
    """A hosted ``api`` worker under --lineage on partition 2: its outputs, the loops it
    ran in blocks, and the links its file says (as the trace's reader expands them)."""
    import dataclasses

    import pyarrow.feather as feather

    from icedtea_jupyter.executor import host as host_module
    from icedtea_jupyter.executor.lineage import LineageCapture
    from icedtea_jupyter.executor.wrappers import PartitionFunction
    from icedtea_jupyter.lineage.tables import expanded
    from icedtea_jupyter.store import layout
    from tests.unit.fakes import RecordingChannel, make_spec, shared_store

    monkeypatch.setattr(host_module, "channel_for", lambda run: RecordingChannel())
    monkeypatch.setattr(LineageCapture, "_recording", lambda self, host: True)
    spec = make_spec(api=api)
    spec = dataclasses.replace(spec, run=dataclasses.replace(
        spec.run, lineage=True, store_path=str(tmp_path), store_token=shared_store(tmp_path)))
    used: list = []
    monkeypatch.setattr(host_module.blocks, "run_in_blocks",
                        lambda host, kind, f, it, real=host_module.blocks.run_in_blocks:
                        used.append(kind) or real(host, kind, f, it))
    outputs = list(PartitionFunction(spec, api, f)(2, iter(inputs)))
    [(name, path)] = layout.lineage_files(str(tmp_path))
    return outputs, used, expand(expanded(feather.read_table(path), 2))


def test_a_flatmap_in_blocks_counts_each_inputs_outputs_and_links_them(monkeypatch, tmp_path):
    """A hosted flatMap under --lineage runs in blocks (no per-record loop), its function
    wrapped to count outputs per input; the links it writes say which input each came from."""
    words, used, links = hosted_links(monkeypatch, tmp_path, "flatMap", lambda line: line.split(),
                                      ["a b", "", "c", "d e f"])
    assert words == ["a", "b", "c", "d", "e", "f"] and used == ["flatMap"]
    assert links == {(0, 0, 2, 0), (1, 0, 2, 0), (2, 0, 2, 2), (3, 0, 2, 3),
                     (4, 0, 2, 3), (5, 0, 2, 3)}  # line 1 has no word


def test_a_filter_in_blocks_notes_what_it_kept_and_links_it(monkeypatch, tmp_path):
    """A grep under --lineage runs in blocks too: each kept line to its output."""
    kept, used, links = hosted_links(monkeypatch, tmp_path, "filter", lambda line: "x" in line,
                                     ["ax", "b", "c", "xx", "x", "d"])
    assert kept == ["ax", "xx", "x"] and used == ["filter"]
    assert links == {(0, 0, 2, 0), (1, 0, 2, 3), (2, 0, 2, 4)}


def test_an_aggregations_reduce_side_links_each_output_to_the_combiners_of_its_key():
    # its combiners' origins are the host's (Origins strips their tags); its keys are
    # numbered as they stream into the merger, by C calls
    from types import SimpleNamespace

    from icedtea_jupyter.executor.input_order import Origins
    from icedtea_jupyter.executor.lineage import LineageCapture

    plugin = LineageCapture(SimpleNamespace(spec=SimpleNamespace(api="reduceByKey",
                                                                 phase="merge")))
    assert not plugin.needs_records(None)
    origins = Origins()
    tagged = [("a", (0, 3, 1)), ("b", (1, 0, 2)), ("a", (1, 5, 4))]
    assert list(plugin.tap_merge(origins.tap(iter(tagged)), origins)) == [
        ("a", 1), ("b", 2), ("a", 4)]
    assert list(plugin.partition_outputs(None, iter([("b", 2), ("a", 5)]))) == [
        ("b", 2), ("a", 5)]
    assert expand(plugin.links(0, 3, 2)) == {(1, 0, 0, 3), (1, 0, 1, 5), (0, 0, 1, 0)}
