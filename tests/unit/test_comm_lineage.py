"""Lineage requests of the icedtea comm without Spark: the Run API is real, the traces it
returns are doubles (``lineage_run``); a run recorded without --lineage is a real one."""
import itertools

import pytest

from icedtea_jupyter.comm import lineage as comm_lineage
from icedtea_jupyter.comm.target import handle
from icedtea_jupyter.lineage.trace import TracedRecord
from icedtea_jupyter.session import registry
from icedtea_jupyter.session import run as run_module
from tests.unit.test_replay_engine import DATA3, TARGETS3, debugger

LINES = ["a zzrare line", "b line", "a b"]
OUTPUTS = [(0, 0, ("a", 2)), (0, 1, ("zzrare", 1)), (1, 0, ("b", 2)), (1, 1, ("line", 2))]


class FakeTrace:
    """What ``trace_back``/``trace_forward`` return, over a fixed three-operator path."""

    engine = "duckdb"

    def __init__(self, direction: str, ends: list[tuple], at: dict[str, list[tuple]]) -> None:
        self.direction = direction
        self._ends = ends
        self._at = at
        self.notes = ["a note"]
        self.asked: list = []

    @property
    def operators(self) -> dict[str, int]:
        return {name: len(rows) for name, rows in self._at.items()}

    def __len__(self) -> int:
        return len(self._ends)

    def rows(self, operator=None, start=0, size=None):
        rows = self._ends if operator is None else self._at[operator]
        rows = rows[start:] if size is None else rows[start:start + size]
        return [TracedRecord(*row, self) for row in rows]

    def count(self, operator=None):
        return len(self._ends if operator is None else self._at[operator])

    def replay(self):
        if self.direction != "back":
            raise ValueError("replay re-runs the sources a backward trace ends at")
        self.log(f"{self.call}.replay()")
        return [("zzrare", 1), ("a", 1), ("line", 1)]

    def theta_input(self, traced):
        self.asked.append(tuple(traced[:3]))
        return (0, 2)  # θ's input #2 on partition 0


def back_trace(at):
    outputs = [("count", p, x, r) for p, x, r in OUTPUTS if (p, x) == at]
    sources = [("lines", 0, 0, LINES[0]), ("lines", 1, 3, "zzrare again")]
    return FakeTrace("back", sources, {"lines": sources, "split": sources, "count": outputs})


def forward_trace(at):
    source = [("lines", *at, LINES[at[1]])]
    return FakeTrace("forward", [("count", 0, 1, ("zzrare", 1))],
                     {"lines": source, "count": [("count", 0, 1, ("zzrare", 1))]})


def with_lineage_doubles(run, monkeypatch):
    """``run`` with lineage doubles below its API; trace ids count from 1 again."""
    monkeypatch.setattr(run, "_lineage", lambda: None)
    monkeypatch.setattr(run_module, "output_rows", lambda lineage: ("count", list(OUTPUTS)))
    monkeypatch.setattr(run_module, "trace_back",
                        lambda lineage, row, operator, at: back_trace(at))
    monkeypatch.setattr(run_module, "trace_forward",
                        lambda lineage, record, operator, at: forward_trace(at))
    monkeypatch.setattr(comm_lineage, "_IDS", itertools.count(1))
    return run


@pytest.fixture
def lineage_run(stored_run, monkeypatch):
    return with_lineage_doubles(stored_run, monkeypatch)


def request(method, **params):
    return handle({"kind": "request", "id": 1, "method": method, "params": params})


def test_output_rows_come_by_page_and_through_the_filter(lineage_run):
    reply = request("lineage.outputs", run=lineage_run.id, start=1, size=2)
    assert reply["ok"], reply
    result = reply["result"]
    assert result["operator"] == "count"
    page = result["page"]
    assert (page["total"], page["start"]) == (4, 1)
    assert [(r["partition"], r["position"]) for r in page["rows"]] == [(0, 1), (1, 0)]
    assert page["rows"][0]["record"] == {"$t": "tuple", "v": ["zzrare", 1]}  # tagged JSON
    filtered = request("lineage.outputs", run=lineage_run.id, filter="ZZR")["result"]["page"]
    assert filtered["total"] == 1 and filtered["rows"][0]["position"] == 1


def test_a_backward_trace_gives_its_path_its_first_page_and_is_logged(lineage_run):
    reply = request("lineage.trace_back", run=lineage_run.id, partition=0, position=1, size=1)
    assert reply["ok"], reply
    trace = reply["result"]
    assert trace["direction"] == "back" and trace["engine"] == "duckdb"
    assert trace["operators"] == [{"operator": "lines", "count": 2}, {"operator": "split", "count": 2},
                                  {"operator": "count", "count": 1}]
    assert trace["from"] == {"operator": "count", "partition": 0, "position": 1,
                             "record": {"$t": "tuple", "v": ["zzrare", 1]}}
    assert trace["total"] == 2 and trace["notes"] == ["a note"]
    assert trace["page"]["total"] == 2 and len(trace["page"]["rows"]) == 1  # size=1
    assert trace["call"] == "run.trace_back(at=(0, 1))"
    assert [(a["source"], a["call"]) for a in lineage_run.actions] == [
        ("sidebar", "run.trace_back(at=(0, 1))")]
    # its other pages, and its records at an operator on the way
    more = request("lineage.records", run=lineage_run.id, trace=trace["trace"], start=1, size=5)
    assert [(r["operator"], r["partition"], r["position"]) for r in more["result"]["page"]["rows"]] \
        == [("lines", 1, 3)]
    at = request("lineage.records", run=lineage_run.id, trace=trace["trace"], operator="count")
    assert at["result"]["page"]["operator"] == "count"
    assert at["result"]["page"]["rows"][0]["position"] == 1
    missing = request("lineage.records", run=lineage_run.id, trace=trace["trace"], operator="nope")
    assert missing["error"]["type"] == "not_found" and "reached lines, split, count" in \
        missing["error"]["message"]


def test_a_forward_trace_starts_at_the_source_record_named(lineage_run):
    reply = request("lineage.trace_forward", run=lineage_run.id, operator="lines", partition=0,
                    position=2)
    assert reply["ok"], reply
    trace = reply["result"]
    assert trace["direction"] == "forward"
    assert trace["from"] == {"operator": "lines", "partition": 0, "position": 2, "record": "a b"}
    assert trace["call"] == "run.trace_forward(operator='lines', at=(0, 2))"
    assert lineage_run.actions[-1]["call"] == trace["call"]


def test_a_trace_no_longer_kept_says_to_trace_again(lineage_run, monkeypatch):
    monkeypatch.setattr(comm_lineage, "KEPT", 2)
    first = request("lineage.trace_back", run=lineage_run.id, partition=0, position=1)["result"]
    for _ in range(2):
        request("lineage.trace_back", run=lineage_run.id, partition=0, position=0)
    reply = request("lineage.records", run=lineage_run.id, trace=first["trace"])
    assert not reply["ok"] and "trace the row again" in reply["error"]["message"]
    bad = request("lineage.outputs", run=lineage_run.id, size="ten")
    assert bad["error"]["type"] == "bad_request" and "'size'" in bad["error"]["message"]


def test_jump_to_a_traced_record_moves_the_debugger_before_its_theta_input(lineage_run,
                                                                           monkeypatch):
    from icedtea_jupyter.replay import remote

    trace = request("lineage.trace_back", run=lineage_run.id, partition=0, position=1)["result"]
    with debugger(DATA3, TARGETS3) as engine:
        monkeypatch.setattr(remote, "debugger_for", lambda run, on_move=None, on_progress=None: engine)
        kept = comm_lineage._kept(lineage_run, trace["trace"])
        reply = request("debug.jump_to", run=lineage_run.id, trace=trace["trace"],
                        operator="lines", partition=1, position=3)
        assert reply["ok"], reply
        view = reply["result"]
        theta = view["chain"][0]
        # θ has processed two records of partition 0: its input #2 is the next one
        assert {(w["partition"], w["count"]) for w in view["workers"] if w["operator"] == theta} \
            >= {(0, 2)}
        assert kept.asked == [("lines", 1, 3)]
        assert view["pending"]["0"][theta]["records"][0] is not None


def test_a_run_without_lineage_says_to_record_it_again_with_the_flag(stored_run):
    reply = request("lineage.outputs", run=stored_run.id)
    assert reply["error"]["type"] == "no_lineage"
    assert "%%icedtea --lineage" in reply["error"]["message"]
    reply = request("lineage.trace_back", run=stored_run.id, partition=0, position=0)
    assert reply["error"]["type"] == "no_lineage"


def test_a_running_run_is_traced_once_it_has_ended(stored_run, monkeypatch):
    monkeypatch.setitem(stored_run.manifest, "status", "running")
    monkeypatch.setattr(type(stored_run), "status", property(lambda self: "running"))
    reply = request("lineage.outputs", run=stored_run.id)
    assert reply["error"]["type"] == "bad_request" and "still running" in reply["error"]["message"]
    assert registry.get(stored_run.id) is stored_run


def test_replay_only_these_reruns_a_kept_backward_trace_and_is_logged(lineage_run):
    back = request("lineage.trace_back", run=lineage_run.id, partition=0, position=1)["result"]
    forward = request("lineage.trace_forward", run=lineage_run.id, operator="lines",
                      partition=0, position=0)["result"]
    reply = request("lineage.replay", run=lineage_run.id, trace=back["trace"], size=2,
                    source="sidebar")
    assert reply["ok"], reply
    result = reply["result"]
    assert (result["total"], result["call"]) == (3, "run.trace_back(at=(0, 1)).replay()")
    assert result["outputs"] == [{"$t": "tuple", "v": ["zzrare", 1]},
                                 {"$t": "tuple", "v": ["a", 1]}]  # the first page
    assert lineage_run.actions[-1]["call"] == "run.trace_back(at=(0, 1)).replay()"
    assert lineage_run.actions[-1]["source"] == "sidebar"
    refused = request("lineage.replay", run=lineage_run.id, trace=forward["trace"])
    assert not refused["ok"] and "backward trace" in refused["error"]["message"]
