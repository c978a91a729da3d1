"""The input order of a join's merge: run-length encoded as combiners are consumed."""
import zlib

import numpy as np
from pyspark.serializers import AutoBatchedSerializer, CPickleSerializer

from icedtea_jupyter.executor import host as host_module
from icedtea_jupyter.executor import wrappers as w
from icedtea_jupyter.executor.input_order import InputOrder, run_lengths
from icedtea_jupyter.executor.worker_file import write_replay_log
from icedtea_jupyter.store.replay_logs import read_replay_log

from .fakes import RecordingChannel, make_spec


def combiner(key, index, *values):
    return key, [(index, v) for v in values]


def test_runs_change_only_where_the_input_changes():
    order = InputOrder()
    combiners = [combiner(k, i, k) for k, i in enumerate([0, 0, 1, 1, 1, 0, 2])]
    assert list(order.tap(iter(combiners))) == combiners
    assert len(order.starts) == 8  # one (input, position) pair per change, not per record
    assert order.runs(7).tolist() == [0, 2, 1, 3, 0, 1, 2, 1]
    assert InputOrder().runs(0).tolist() == []


def test_the_last_run_ends_with_what_the_worker_consumed():
    assert run_lengths([1, 0, 0, 4], 6).tolist() == [1, 4, 0, 2]
    assert run_lengths([1, 0, 0, 4], 4).tolist() == [1, 4]  # stopped before the second run


def test_the_order_log_survives_the_store(tmp_path):
    order = InputOrder()
    list(order.tap(combiner(k, i, "v") for k, i in enumerate([1, 1, 0])))
    log, body = order.replay_log({"results": [7], "kind": "after_last"}, 3)
    message = {"worker": {"operator": 2, "partition": 1, "stage": 0, "attempt": 0, "task": 9},
               "records_in": 3, "records_out": 5, "log": log}
    read = read_replay_log(write_replay_log(str(tmp_path), message, body))
    assert read.kind == "order" and read.results == [7]
    assert read.order.tolist() == [[1, 2], [0, 1]]
    assert read.outputs.tolist() == [0, 0, 0] and read.after_last == 5


def test_a_merge_outside_g_theta_still_logs_its_input_order(monkeypatch):
    channel = RecordingChannel()
    monkeypatch.setattr(host_module, "channel_for", lambda run: channel)
    merge = w.GroupMerge(make_spec(api="join"), w.JoinDispatch(False, True), True, 512,
                         AutoBatchedSerializer(CPickleSerializer()))
    shuffled = [combiner("a", 1, 10), combiner("b", 1, 20), combiner("a", 0, 1, 2),
                combiner("c", 0, 3), combiner("a", 1, 11)]
    out = sorted(merge(0, iter(shuffled)), key=repr)
    assert out == [("a", (1, 10)), ("a", (1, 11)), ("a", (2, 10)), ("a", (2, 11)),
                   ("b", (None, 20))]  # right outer: "c" has no right value
    (end,) = channel.ended
    assert end["log"]["kind"] == "order" and end["records_in"] == 5
    runs = np.frombuffer(zlib.decompress(channel.bodies[0]), np.uint32).tolist()
    assert runs == [1, 2, 0, 2, 1, 1]


def test_join_and_cogroup_dispatch_like_pyspark():
    values = [(0, "x"), (1, 1), (0, "y")]
    assert list(w.JoinDispatch(False, False)(values)) == [("x", 1), ("y", 1)]
    assert list(w.JoinDispatch(True, False)([(0, "x")])) == [("x", None)]
    assert list(w.JoinDispatch(False, True)([(0, "x")])) == []
    assert list(w.JoinDispatch(True, True)([(1, 2)])) == [(None, 2)]
    assert [list(g) for g in w.CogroupDispatch(3)(values)] == [["x", "y"], [1], []]


def test_a_joins_origins_become_runs_of_its_inputs():
    from icedtea_jupyter.executor.input_order import input_runs

    # a join's origins, by the union partition its inputs' partitions start at (0 and 3)
    assert input_runs([(0, 0), (2, 1), (3, 0), (4, 0), (1, 5)], [0, 3]) == [
        (0, 2), (1, 2), (0, 1)]


def test_a_joins_feed_waits_for_thetas_partition_to_end_and_follows_the_logged_order():
    from types import SimpleNamespace

    from icedtea_jupyter.replay.order import JoinFeed

    cursors = {0: SimpleNamespace(ended=False, sinks={"leaf": [("k", 1), ("j", 2)]})}
    side = {1: [("k", [(1, "x")])]}  # union partition 1: the other input's map side

    def combine(tagged):  # each key's values in a list, in order of first arrival
        groups = {}
        for key, value in tagged:
            groups.setdefault(key, []).append(value)
        return list(groups.items())

    feed = JoinFeed([(1, 0), (0, 1), (0, 0)], ("join", "join", ("leaf", None), (0, 1)),
                    combine, side.__getitem__)
    assert feed.next_records(cursors) == [("k", [(1, "x")])]  # θ's partition 0 runs on
    assert not feed.complete(cursors)
    cursors[0].ended = True
    assert feed.next_records(cursors) == [("j", [(0, 2)]), ("k", [(0, 1)])]
    assert feed.complete(cursors)
