"""A worker's lineage links (executor/lineage.py) against links computed by hand."""
from array import array

from icedtea_jupyter.executor.lineage import JoinOrigins, KeyIndex, Links, Picker


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


def test_a_join_map_side_tags_each_record_with_its_inputs_partition_and_position():
    # a union of an input of 2 partitions and one of 3: union partition 3 is the second
    # input's partition 1
    tagged = list(JoinOrigins([0, 2], mixed=False)(3, [("k", (1, "a")), ("j", (1, "b"))]))
    assert tagged == [("k", (1, 0, [(1, "a")])), ("j", (1, 1, [(1, "b")]))]
    # partitioned alike: union partition 1 holds both inputs' partition 1, one after the other
    mixed = JoinOrigins([0, 2], mixed=True)(1, [("k", (0, "a")), ("k", (1, "b")), ("j", (1, "c"))])
    assert [value[:2] for _, value in mixed] == [(1, 0), (1, 0), (1, 1)]


def test_the_picker_keeps_only_the_positions_asked_for():
    assert list(Picker({0: [1, 3]})(0, iter("abcdef"))) == [(0, 1, "b"), (0, 3, "d")]
    assert list(Picker({0: None})(0, iter("ab"))) == [(0, 0, "a"), (0, 1, "b")]


def capture(api: str, phase: str, inputs: list, outputs: list):
    """A LineageCapture of a key-based worker fed ``inputs`` and ``outputs``."""
    from types import SimpleNamespace

    from icedtea_jupyter.executor.lineage import LineageCapture

    plugin = LineageCapture(SimpleNamespace(spec=SimpleNamespace(api=api, phase=phase)))
    consumed = list(plugin.records(None, iter(inputs)))
    list(plugin.partition_outputs(None, iter(outputs)))
    return plugin, consumed


def test_a_map_side_links_each_input_to_the_combiner_of_its_key():
    from types import SimpleNamespace

    from icedtea_jupyter.executor.lineage import LineageCapture

    plugin = LineageCapture(SimpleNamespace(spec=SimpleNamespace(api="reduceByKey",
                                                                 phase="combine")))
    inputs = [("a", 1), ("b", 1), ("c", 1), ("a", 1), ("b", 1)]
    assert list(plugin.tap_keys(iter(inputs))) == inputs and not plugin.needs_records(None)
    # the merger's outputs come in its own order: c, a, b (tagged with their origins)
    outputs = [("c", (0, 0, 1)), ("a", (0, 1, 2)), ("b", (0, 2, 2))]
    assert list(plugin.partition_outputs(None, iter(outputs))) == outputs
    assert plugin.key_links().to_pydict() == {"key_out": [1, 2, 0, 1, 2]}


def test_a_map_side_with_more_keys_than_16_bits_hold_links_in_32():
    from types import SimpleNamespace

    import pyarrow as pa

    from icedtea_jupyter.executor.lineage import LineageCapture

    plugin = LineageCapture(SimpleNamespace(spec=SimpleNamespace(api="reduceByKey",
                                                                 phase="combine")))
    keys = list(range(70_000))
    list(plugin.tap_keys((k, 1) for k in keys + [69_999]))
    list(plugin.partition_outputs(None, ((k, (0, i, 1)) for i, k in enumerate(reversed(keys)))))
    column = plugin.key_links().column("key_out")
    assert column.type == pa.int32() and column.to_pylist()[:2] == [69_999, 69_998]
    assert column.to_pylist()[-2:] == [0, 0]


def test_a_run_recorded_before_finds_a_map_sides_links_by_key():
    [(part, index)] = KeyIndex()(2, iter([("a", 1), ("b", 1), ("a", 1)]))
    assert part == 2 and {k: list(v) for k, v in index.items()} == {"a": [0, 2], "b": [1]}


def test_a_reduce_side_links_every_output_of_a_key_to_each_combiner_of_it():
    # a join's combiners: (key, (partition, position, [(input, value)])), passed on untagged
    combiners = [("k", (0, 4, [(0, "x")])), ("j", (1, 0, [(1, "y")])), ("k", (1, 2, [(1, "z")]))]
    plugin, consumed = capture("join", "", combiners, [("k", ("x", "z"))])
    assert consumed == [("k", [(0, "x")]), ("j", [(1, "y")]), ("k", [(1, "z")])]
    assert expand(plugin.links(0, 3, 1)) == {(0, 0, 0, 4), (0, 1, 1, 2)}  # "j": no output


def test_writing_links_in_a_worker_does_not_import_pandas(tmp_path):
    import subprocess
    import sys

    code = ("import sys; from array import array; "
            "from icedtea_jupyter.executor.lineage import Links, lengths_table, write_links; "
            "lengths_table(0, array('q', [2, 0, 1])); "
            "links = Links(0); links.kept(array('q', [1]), 3); "
            f"write_links({str(tmp_path / 'l.arrow')!r}, links.table()); "
            "print('pandas' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
    import pyarrow.feather as feather

    assert feather.read_table(tmp_path / "l.arrow").to_pydict()["in_start"] == [0, 2]


def test_a_flatmap_in_blocks_counts_each_inputs_outputs_and_links_them(monkeypatch, tmp_path):
    """A hosted flatMap under --lineage runs in blocks (no per-record loop), its function
    wrapped to count outputs per input; the links it writes say which input each came from."""
    import dataclasses

    import pyarrow.feather as feather

    from icedtea_jupyter.executor import host as host_module
    from icedtea_jupyter.executor.lineage import LineageCapture
    from icedtea_jupyter.executor.wrappers import PartitionFunction
    from icedtea_jupyter.store import layout
    from tests.unit.fakes import RecordingChannel, make_spec

    monkeypatch.setattr(host_module, "channel_for", lambda run: RecordingChannel())
    monkeypatch.setattr(LineageCapture, "_recording", lambda self, host: True)
    spec = make_spec(api="flatMap")
    spec = dataclasses.replace(spec, run=dataclasses.replace(spec.run, lineage=True,
                                                            store_path=str(tmp_path)))
    used = []
    monkeypatch.setattr(host_module.blocks, "run_in_blocks",
                        lambda host, kind, f, it, real=host_module.blocks.run_in_blocks:
                        used.append(kind) or real(host, kind, f, it))
    lines = ["a b", "", "c", "d e f"]
    words = list(PartitionFunction(spec, "flatMap", lambda line: line.split())(2, iter(lines)))
    assert words == ["a", "b", "c", "d", "e", "f"] and used == ["flatMap"]
    [(name, path)] = layout.lineage_files(str(tmp_path))
    links = feather.read_table(path)
    assert expand(links) == {(0, 0, 2, 0), (1, 0, 2, 0), (2, 0, 2, 2), (3, 0, 2, 3),
                             (4, 0, 2, 3), (5, 0, 2, 3)}  # line 1 has no word
