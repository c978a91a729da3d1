"""Which attempt of a task that ran twice at once (a speculative copy beside its original)
the run keeps: the one Spark's status store says succeeded."""
from icedtea_jupyter.session.metrics import metrics_frame, successful_attempts
from icedtea_jupyter.session.registry import open_run
from icedtea_jupyter.session.spark_attempts import (
    SparkAttempt,
    duplicated,
    killed_warning,
    losers,
)
from icedtea_jupyter.store.run_store import RunStore
from tests.unit.test_store import end

ORIGINAL, COPY = (1, 0, 0, 0, 10), (1, 0, 0, 1, 14)  # operator, stage, partition, attempt, task


def finished(run_id, killed):
    """The manifest of a finished run of one Python operator, ``total``."""
    return {"id": run_id, "status": "finished", "killed_attempts": killed,
            "dag": {"operators": [{"id": 1, "name": "total", "kind": "python",
                                   "api": "rdd.map"}]}}


def states(*keys):
    return [(key, {"status": "ok"}) for key in keys]


def test_only_partitions_that_ran_in_several_tasks_are_looked_up():
    other, replayed = (1, 0, 1, 0, 11), (1, -1, 2, 0, -1)
    assert duplicated(states(ORIGINAL, COPY, other, replayed)) == {(1, 0, 0): [ORIGINAL, COPY]}
    assert duplicated(states(other, (2, 0, 1, 0, 11))) == {}  # one task, two operators


def test_the_attempt_spark_did_not_keep_is_killed_naming_the_winner():
    groups = duplicated(states(ORIGINAL, COPY))
    copy_won = {10: SparkAttempt("KILLED", False), 14: SparkAttempt("SUCCESS", True)}
    assert losers(groups, copy_won) == [
        {"operator": 1, "stage": 0, "partition": 0, "attempt": 0, "task": 10,
         "speculative": False, "winner": {"attempt": 1, "task": 14, "speculative": True}}]
    original_won = {10: SparkAttempt("SUCCESS", False), 14: SparkAttempt("RUNNING", True)}
    assert [(k["task"], k["winner"]["task"]) for k in losers(groups, original_won)] == [(14, 10)]


def test_failures_and_tasks_without_a_winner_stay_as_they_were():
    groups = duplicated(states(ORIGINAL, COPY))
    lost_executor = {10: SparkAttempt("FAILED", False), 14: SparkAttempt("SUCCESS", False)}
    assert losers(groups, lost_executor) == []
    assert losers(groups, {10: SparkAttempt("KILLED", False)}) == []  # a cancelled job
    both = {10: SparkAttempt("SUCCESS", False), 14: SparkAttempt("SUCCESS", False)}
    assert losers(groups, both) == []  # two stage attempts: each its own success


def test_a_killed_attempt_counts_nothing_even_if_it_wrote_ok_after_the_run(tmp_path):
    store = RunStore.create(str(tmp_path), "r1")
    store.write_worker(end(1, 0, 0, 10, n=300))  # the loser got to its end before the kill
    store.write_worker(end(1, 0, 1, 14, n=300))
    store.write_worker(end(1, 1, 0, 11, n=300))
    killed = losers(duplicated(states(ORIGINAL, COPY)),
                    {10: SparkAttempt("SUCCESS", False), 14: SparkAttempt("KILLED", True)})
    store.write_manifest({"status": "finished", "killed_attempts": killed})
    table = store.worker_table()
    assert dict(zip(table["task"].to_pylist(), table["status"].to_pylist())) == {
        10: "ok", 14: "killed", 11: "ok"}
    assert sorted(successful_attempts(table)["task"]) == [10, 11]  # not the later attempt
    assert metrics_frame(table, {1: "total"})["records_in"].tolist() == [300, 300]
    warning, = killed_warning(killed, {1: "total"})
    assert "'total' in two attempts at once (spark.speculation)" in warning
    assert "partition 0: attempt 0 (the original) won, attempt 1 was killed" in warning


def test_the_panel_counts_the_records_of_the_winner_only(tmp_path):
    store = RunStore.create(str(tmp_path), "r2")
    for partition, attempt, task in ((0, 0, 10), (0, 1, 14), (1, 0, 11)):
        store.write_worker(end(1, partition, attempt, task, n=300))
    killed = losers(duplicated(states(ORIGINAL, COPY)),
                    {10: SparkAttempt("KILLED", False), 14: SparkAttempt("SUCCESS", True)})
    store.write_manifest(finished("r2", killed))
    [row] = open_run(store.path).progress()
    assert (row["records_in"], row["records_out"], row["done"], row["failed"]) == (600, 600, 2, 0)


def test_the_panel_counts_a_retried_task_once(tmp_path):
    store = RunStore.create(str(tmp_path), "r3")
    store.write_worker(end(1, 0, 0, 10, "failed", n=4))
    store.write_worker(end(1, 0, 1, 14, n=10))
    store.write_manifest(finished("r3", []))
    [row] = open_run(store.path).progress()
    assert (row["records_in"], row["done"], row["failed"]) == (10, 1, 1)
