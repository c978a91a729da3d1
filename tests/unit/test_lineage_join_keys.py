"""A join's keys captured during the run (executor/lineage.SideKeys, key_column) and read
by a trace (lineage/join_keys.JoinKeys), against keys written here by hand."""
from array import array
from types import SimpleNamespace

import pyarrow as pa
import pytest

from icedtea_jupyter.executor import lineage as executor_lineage
from icedtea_jupyter.executor.lineage import key_column
from icedtea_jupyter.executor.lineage_keys import SideKeys, keys_table
from icedtea_jupyter.lineage.join_keys import JoinKeys, keep_joined_keys
from icedtea_jupyter.store import layout
from tests.unit.fakes import shared_store

RECORDS = [("ann", 1), ("bob", 2), ("ann", 3), ("eve", 4)]


def side_keys(tmp_path, monkeypatch, records, ended=False):
    """SideKeys of node 5 (3 partitions) on partition 1 of a run stored at ``tmp_path``:
    the records it passed on, and the keys file it wrote (None: none)."""
    from icedtea_jupyter.executor import channel

    monkeypatch.setattr(channel, "_run_has_ended", lambda run: ended)
    run = SimpleNamespace(run_id="run-1", store_path=str(tmp_path),
                          store_token=shared_store(tmp_path))
    passed = list(SideKeys(run, 5, 3)(1, iter(records)))
    path = layout.derived_keys_path(str(tmp_path), 5, 1)
    try:
        with pa.memory_map(path) as source:
            return passed, pa.ipc.open_file(source).read_all()
    except FileNotFoundError:
        return passed, None


def test_a_join_inputs_keys_are_written_in_position_order_once_it_runs_out(
        tmp_path, monkeypatch):
    passed, table = side_keys(tmp_path, monkeypatch, RECORDS)
    assert passed == RECORDS
    assert table.column("key").to_pylist() == ["ann", "bob", "ann", "eve"]
    assert table.schema.metadata[executor_lineage.PARTITIONS] == b"3"
    column = table.column("key").combine_chunks()
    assert column.dictionary.to_pylist() == ["ann", "bob", "eve"]  # each key once


def test_nothing_is_written_for_keys_not_plain_or_after_the_run(tmp_path, monkeypatch):
    passed, table = side_keys(tmp_path, monkeypatch, [(("ann", 1), 1), ((2,), 2)])
    assert len(passed) == 2 and table is None
    assert side_keys(tmp_path, monkeypatch, RECORDS, ended=True)[1] is None


def test_a_partial_read_writes_nothing(tmp_path, monkeypatch):
    from icedtea_jupyter.executor import channel

    monkeypatch.setattr(channel, "_run_has_ended", lambda run: False)
    run = SimpleNamespace(run_id="run-1", store_path=str(tmp_path),
                          store_token=shared_store(tmp_path))
    tapped = SideKeys(run, 5, 3)(1, iter(RECORDS))
    next(tapped)  # a take(1): the partition not read to its end
    assert layout.derived_keys_files(str(tmp_path), 5) == []


@pytest.mark.parametrize("keys, numbers", [(["a", "b"], [0, 1, 1, 0]), ([7, -2], [1, 0]),
                                           ([f"k{i}" for i in range(300)], list(range(300)))])
@pytest.mark.parametrize("typecode", ["I", "q"])  # a join input's tap, its reduce side
def test_key_column_gives_each_record_its_key(keys, numbers, typecode):
    column = key_column(array(typecode, numbers), keys)
    assert column.to_pylist() == [keys[n] for n in numbers]
    assert column.type.index_type == (pa.uint8() if len(keys) <= 256 else pa.uint16())


def test_key_column_refuses_keys_arrow_would_not_match_by_value():
    for keys in ([True, False], [1, "a"], [None], [2 ** 70], [1.5]):
        assert key_column(array("I", [0]), keys) is None


def test_join_keys_read_captured_columns_both_ways(tmp_path):
    # the join (node 9, partitions 0-1) captured by its reduce side, the input (node 5)
    # by SideKeys; no RDDs: a reopened run
    store = str(tmp_path)
    captured = {}
    for part, keys in enumerate([["a", "a", "b"], ["c"]]):
        numbers = array("I", [sorted(set(keys)).index(k) for k in keys])
        path = str(tmp_path / f"join-{part}.arrow")
        table = pa.table({"key": key_column(numbers, sorted(set(keys)))})
        with pa.OSFile(path, "wb") as sink, pa.ipc.new_file(sink, table.schema) as writer:
            writer.write_table(table)
        captured[(9, part)] = path
    for part, keys in enumerate([["b", "x", "a"], ["a"], []]):
        numbers = array("I", [sorted(set(keys)).index(k) for k in keys])
        executor_lineage.write_links(layout.derived_keys_path(store, 5, part),
                                     keys_table(
                                         key_column(numbers, sorted(set(keys))), 3))
    join_keys = JoinKeys(store, lambda node: None, captured)
    assert join_keys.prepare({9: [0], 5: None})
    assert join_keys.partitions(9) == 2 and join_keys.partitions(5) == 3
    assert join_keys.keys_at(9, {0: {0, 1}}) == {"a"}
    assert join_keys.with_keys(5, {"a"}) == {0: {2}, 1: {0}}
    assert join_keys.prepare({9: None, 5: [0]})
    assert join_keys.with_keys(9, join_keys.keys_at(5, {0: {0}})) == {0: {2}}  # "b"
    assert join_keys.with_keys(9, join_keys.keys_at(5, {0: {1}})) == {}  # "x": none
    assert join_keys.with_keys(5, {1}) == {}  # a key of another type matches nothing


def test_a_runs_end_keeps_only_the_keys_its_joins_output(tmp_path):
    # input 5 feeds join 9, whose outputs have keys "a" and "c": "b" and "x" become nulls
    store = str(tmp_path)
    for part, keys in enumerate([["b", "x", "a", "b"], ["c", "x"]]):
        numbers = array("I", [sorted(set(keys)).index(k) for k in keys])
        executor_lineage.write_links(layout.derived_keys_path(store, 5, part),
                                     keys_table(
                                         key_column(numbers, sorted(set(keys))), 2))
    reduce_side = str(tmp_path / "join-0.arrow")
    executor_lineage.write_links(reduce_side, executor_lineage.by_key(array("I", [0, 0, 1]),
                                                                      ["a", "c"]))
    dag = SimpleNamespace(operators=[SimpleNamespace(id=9, kind="python", api="join",
                                                     inputs=[5])])
    keep_joined_keys(store, dag, {(9, 0): reduce_side})
    join_keys = JoinKeys(store, lambda node: None, {(9, 0): reduce_side})
    assert join_keys.prepare({5: None, 9: None})
    assert join_keys.with_keys(5, {"a", "c"}) == {0: {2}, 1: {0}}
    assert join_keys.keys_at(5, {0: {0, 1, 2, 3}, 1: {1}}) == {"a"}  # the others: none
    with pa.memory_map(layout.derived_keys_path(store, 5, 0)) as source:
        pruned = pa.ipc.open_file(source).read_all()
    assert pruned.column("key").to_pylist() == [None, None, "a", None]
    assert pruned.schema.metadata[executor_lineage.PARTITIONS] == b"2"
