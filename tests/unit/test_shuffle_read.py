"""A ``partitionBy`` after θ's chain: the map side marks each block, the reduce side logs
(map partition, records) runs, and replay routes θ's outputs back into that order."""
import os
import subprocess
import sys
from types import SimpleNamespace

import pytest

from icedtea_jupyter.executor.shuffle_read import HASH_PROBE, BlockMarks, BlockRuns, Marker, Marking
from icedtea_jupyter.executor.worker_file import write_replay_log
from icedtea_jupyter.replay.shuffle_feed import ShuffleRuns, WorkersHashing
from icedtea_jupyter.replay.worker import ReplayError
from icedtea_jupyter.store.replay_logs import read_replay_log

MAPS = {0: [(1, "a"), (2, "b"), (3, "c"), (5, "d")], 1: [(4, "e"), (7, "f"), (9, "g")]}


def blocks(route, partitions, fetch_order, q, batch=2):
    """What reduce partition ``q`` reads: each map partition's marked records routed to
    ``q``, in PySpark's batches, the blocks in ``fetch_order``."""
    read = []
    for m in fetch_order:
        marked = [kv for kv in BlockMarks(partitions)(m, iter(MAPS[m])) if route(kv[0]) == q]
        read.extend(marked[i:i + batch] for i in range(0, len(marked), batch))
    return read


def odd(key):
    return key % 2


def test_the_reduce_side_reads_the_records_and_logs_one_run_per_block(tmp_path):
    route = Marking(odd)
    assert route(Marker(0, 1)) == 1 and hash(Marker(3, 1)) == 1  # portable_hash: hash
    order = BlockRuns()
    records = list(order.read(blocks(route, 2, [1, 0], q=1)))
    assert records == [(7, "f"), (9, "g"), (1, "a"), (3, "c"), (5, "d")]
    log, body = order.replay_log(None, 4)  # the task stopped after four records
    assert log["kind"] == "shuffle_runs" and log["hash_probe"] == hash(HASH_PROBE)
    path = write_replay_log(str(tmp_path), {"worker": {"operator": 3, "partition": 1, "stage": 2,
                                                       "attempt": 0, "task": 7},
                                            "log": log, "records_in": 4}, body)
    read = read_replay_log(path)
    assert read.order.tolist() == [[1, 2], [0, 2]] and read.hash_probe == hash(HASH_PROBE)


def cursors(emitted, ended):
    return {m: SimpleNamespace(sinks={"leaf": list(out)}, ended=ended) for m, out in
            emitted.items()}


def test_replay_hands_over_the_logged_runs_of_the_routed_outputs_in_order():
    log = SimpleNamespace(order=[(1, 2), (0, 3)], hash_probe=hash(HASH_PROBE))
    feed = ShuffleRuns(log, "leaf", 1, odd)
    # map partition 1 has emitted one odd key so far: the first run waits for the next
    assert feed.next_records(cursors({1: MAPS[1][:2], 0: MAPS[0]}, False)) == [(7, "f")]
    done = cursors(MAPS, True)
    assert feed.next_records(done) == [(9, "g"), (1, "a"), (3, "c"), (5, "d")]
    assert feed.complete(done)


def test_a_partitioner_that_routes_otherwise_in_replay_is_named():
    log = SimpleNamespace(order=[(0, 3)], hash_probe=None)
    feed = ShuffleRuns(log, "leaf", 1, lambda key: 0)
    with pytest.raises(ReplayError, match="partition 1 read 3 records of map partition 0.*"
                                          "deterministic"):
        feed.next_records(cursors(MAPS, True))


def workers_hash(seed):
    code = f"import sys; print(hash({HASH_PROBE!r})); print(hash('c1') % 4)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=dict(os.environ, PYTHONHASHSEED=seed), check=True).stdout
    probe, route = out.split()
    return int(probe), int(route)


def test_strings_are_routed_as_the_workers_hashed_them(monkeypatch):
    monkeypatch.setenv("PYTHONHASHSEED", "5")
    probe, expected = workers_hash("5")
    helper = WorkersHashing(lambda key: hash(key) % 4, probe)
    assert helper.routes(["c1"]) == [expected] and helper.routes(["c1", 3]) == [expected, 3]
    with pytest.raises(ReplayError, match="could not hash as they did.*PYTHONHASHSEED=5"):
        WorkersHashing(lambda key: hash(key) % 4, probe + 1).routes(["c1"])
