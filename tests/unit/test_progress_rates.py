"""The operators' rates the sidebar and the panel show: live, then the average."""
from icedtea_jupyter.session.registry import open_run
from icedtea_jupyter.store.run_store import RunStore


def ended(partition: int, records: int, started: float, ended: float) -> dict:
    return {"type": "worker_end",
            "worker": {"operator": 0, "partition": partition, "stage": 0, "attempt": 0,
                       "task": partition},
            "status": "ok", "records_in": records, "records_out": records, "bytes_in": 0,
            "seconds": ended - started, "started": started, "ended": ended,
            "exhausted": True, "error": None}


def test_an_ended_operator_has_no_live_rate_but_its_average_over_its_wall_time(tmp_path):
    store = RunStore.create(str(tmp_path), "r1")
    store.write_manifest({"id": "r1", "status": "finished", "started": 0.0, "ended": 9.0,
                          "dag": {"operators": [{"id": 0, "name": "parse", "kind": "python",
                                                 "api": "rdd.map"}]}})
    store.write_worker(ended(0, 3000, 1.0, 3.0))
    store.write_worker(ended(1, 1000, 2.0, 5.0))
    [row] = open_run(store.path).progress()
    assert row["rate"] == 0.0  # nothing runs
    assert row["average_rate"] == 4000 / (5.0 - 1.0)  # first start to last end
