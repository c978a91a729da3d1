"""The sidebar's live counts: while a run records, the comm sends ``run.progress`` when
the counts move, though the workers' heartbeats that move them raise no run event."""
import time

from icedtea_jupyter.comm import target
from tests.unit.fakes import FakeComm
from tests.waiting import wait_until


class HeartbeatRun:
    """A running run whose records grow as heartbeats arrive, with no event at all."""

    id = "run-beats"
    error = None
    warnings: list = []
    options: dict = {}  # recorded without --skew: no live skew pushes

    def __init__(self) -> None:
        self.status = "running"
        self.started = time.monotonic()
        self.listeners: list = []

    @property
    def duration(self) -> float:
        return time.monotonic() - self.started

    def subscribe(self, listener) -> None:
        self.listeners.append(listener)

    def progress(self) -> list[dict]:
        records = int((time.monotonic() - self.started) * 100)
        return [{"operator": "parse", "phase": "", "records_in": records,
                 "records_out": records, "done": 0, "running": 2, "failed": 0,
                 "rate": 100.0, "average_rate": 100.0}]


def test_counts_that_move_without_an_event_reach_the_sidebar_four_times_a_second_at_most():
    comm = FakeComm()
    target._on_open(comm, {})
    run = HeartbeatRun()
    try:
        target._RunWatcher(run)
        sent = wait_until(lambda: len(comm.events("run.progress")) >= 3 and
                          comm.events("run.progress"), 10, "three progress events")
        counts = [e["progress"][0]["records_in"] for e in sent]
        assert counts == sorted(counts) and counts[-1] > counts[0]
        time.sleep(1.0)
        per_second = len(comm.events("run.progress")) - len(sent)
        assert 1 <= per_second <= 5  # 1 s at PROGRESS_PERIOD: about four, never a flood
    finally:
        run.status = "finished"
        comm.close()
