"""Lineage through the ``icedtea`` comm on a real ``--lineage`` run: the sidebar's requests
(a fake comm) give what the Python API gives, and "Jump here" puts θ before the record."""
from operator import add

import pytest

from tests.spark.test_comm_time_travel import ask, frontend  # noqa: F401 (a fixture)

pytestmark = pytest.mark.spark

LINES = ["spark a", "b spark zzrare", "c d", "spark spark"]  # partition 0: 0-1, 1: 2-3
COUNT = """
counts = (sc.parallelize(LINES, 2).flatMap(lambda line: line.split()).setName("split")
            .map(lambda word: (word, 1)).setName("pair")
            .reduceByKey(add).setName("count").collect())
"""


def test_the_sidebars_trace_and_jump_are_the_apis(record, frontend):  # noqa: F811
    run = record(COUNT, {"LINES": LINES, "add": add}, lineage=True, interesting="split")
    assert run.status == "finished", run.error
    outputs = ask(frontend, "lineage.outputs", run=run.id, filter="ZZRARE")
    assert outputs["operator"] == "count" and outputs["page"]["total"] == 1
    row = outputs["page"]["rows"][0]
    assert row["record"] == {"$t": "tuple", "v": ["zzrare", 1]}
    everything = ask(frontend, "lineage.outputs", run=run.id, size=3)["page"]
    assert everything["total"] == len(set(" ".join(LINES).split())) and len(everything["rows"]) == 3

    back = ask(frontend, "lineage.trace_back", run=run.id, partition=row["partition"],
               position=row["position"])
    api = run.trace_back(("zzrare", 1))
    assert back["from"] == dict(row, operator="count")
    assert [(r["operator"], r["partition"], r["position"], r["record"]) for r in back["page"]["rows"]] \
        == [tuple(r) for r in api.rows()] == [("parallelize", 0, 1, "b spark zzrare")]
    assert {s["operator"]: s["count"] for s in back["operators"]} == api.operators
    assert back["engine"] == "duckdb" and back["total"] == 1
    assert run.actions[-2]["source"] == "sidebar" and run.actions[-2]["call"] == back["call"]
    split = ask(frontend, "lineage.records", run=run.id, trace=back["trace"], operator="split")
    assert [(r["partition"], r["position"], r["record"]) for r in split["page"]["rows"]] == [(0, 4, "zzrare")]

    source = back["page"]["rows"][0]
    forward = ask(frontend, "lineage.trace_forward", run=run.id, operator="parallelize",
                  partition=0, position=1)
    assert forward["from"] == source
    assert sorted(tuple(r["record"]["v"]) for r in forward["page"]["rows"]) == \
        sorted(tuple(r.record) for r in run.trace_forward("b spark zzrare").rows())
    assert {tuple(r["record"]["v"])[0] for r in forward["page"]["rows"]} == {"b", "spark", "zzrare"}

    view = ask(frontend, "debug.jump_to", run=run.id, trace=back["trace"], operator="parallelize",
               partition=0, position=1)
    theta = view["chain"][0]
    assert theta == "split"
    assert view["pending"]["0"]["split"]["records"][0] == "b spark zzrare"  # θ's next input
    counts = {(w["operator"], w["partition"]): w["count"] for w in view["workers"]}
    assert counts[("split", 0)] == 1


def test_a_run_without_lineage_is_refused_with_how_to_get_it(record, frontend):  # noqa: F811
    run = record(COUNT, {"LINES": LINES, "add": add})
    reply = frontend.request("lineage.trace_back", run=run.id, partition=0, position=0)
    assert reply["error"]["type"] == "no_lineage"
    assert "%%icedtea --lineage" in reply["error"]["message"]
