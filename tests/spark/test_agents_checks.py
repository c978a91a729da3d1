"""Row and table integrity checks, golden logic, latency and overhead against pipelines
with planted defects."""
import time

import pytest

pytestmark = pytest.mark.spark

N, PARTS = 1000, 4
SIZE = N // PARTS


def negate_sevens(x):
    """The planted defect: multiples of 7 come out negative."""
    return -x if x % 7 == 0 else x


def test_row_check_alerts_every_failing_record_counted_and_sampled(record):
    run = record(f"out = sc.parallelize(range({N}), {PARTS}).map(negate_sevens)"
                 ".setName('clean').collect()", {"negate_sevens": negate_sevens},
                 checks=["clean: row >= 0"])
    assert run.status == "finished", run.error
    failing = {x for x in range(1, N) if x % 7 == 0}
    alerts = run.alerts()
    mine = alerts[alerts["tool"] == "check"]
    assert set(mine["check"]) == {"clean: row >= 0"}
    assert mine["count"].sum() == len(failing)  # every failure counted
    sampled = mine[mine["record"].notna()]
    assert sampled.groupby("partition").size().to_dict() == {p: 5 for p in range(PARTS)}
    for row in sampled.itertuples():
        assert -row.value in failing and -row.value // SIZE == row.partition
        assert row.operator == "clean"


def keyed(x):
    """(key, amount, ts): key 13 twice (partitions 0 and 2), amount None at x == 600,
    ts going back at x == 333."""
    key = 13 if x == 13 + 2 * SIZE else x
    amount = None if x == 600 else 1
    ts = x - 10 if x == 333 else x
    return (key, amount, ts)


def test_table_checks_are_decided_from_the_workers_partial_aggregates(record):
    checks = ["rows: unique(0)", "rows: not_null(1)", "rows: count between 900 and 1000",
              "rows: sum(1) between 0 and 10", "rows: monotone(2)", "rows: monotone(0)"]
    run = record(f"out = sc.parallelize(range({N}), {PARTS}).map(keyed).setName('rows')"
                 ".collect()", {"keyed": keyed, "SIZE": SIZE}, table_checks=checks)
    assert run.status == "finished", run.error
    outcome = run.agent_table("table_checks").set_index("check")
    assert outcome.loc["rows: unique(0)", "failures"] == 1
    assert outcome.loc["rows: not_null(1)", "failures"] == 1
    assert outcome.loc["rows: count between 900 and 1000", "passed"]
    assert not outcome.loc["rows: sum(1) between 0 and 10", "passed"]  # 999
    assert outcome.loc["rows: monotone(2)", "failures"] == 1  # 323 after 332
    assert outcome.loc["rows: monotone(0)", "failures"] == 1  # 13 after 512
    alerts = run.alerts()
    failed = set(alerts[alerts["tool"] == "check-table"]["check"])
    assert failed == set(checks) - {"rows: count between 900 and 1000"}


def buggy_parse(x):
    return x + 1 if x % 50 == 0 else x


def parse(x):
    return x


def buggy_partition(rows):
    rows = list(rows)
    yield from rows[:-1]  # drops each partition's last record


def whole_partition(rows):
    yield from rows


def test_golden_reference_differences_are_alerts_with_both_outputs(record):
    code = (f"a = sc.parallelize(range({N}), {PARTS}).map(buggy_parse).setName('parse')"
            ".collect()\n"
            f"b = sc.parallelize(range(40), 2).mapPartitions(buggy_partition)"
            ".setName('part').collect()")
    run = record(code, {"buggy_parse": buggy_parse, "parse": parse,
                        "buggy_partition": buggy_partition, "whole_partition": whole_partition},
                 golden=["parse: parse", "part: whole_partition"], golden_sample=1.0)
    assert run.status == "finished", run.error
    alerts = run.alerts()
    per_record = alerts[(alerts["tool"] == "golden") & (alerts["operator"] == "parse")]
    assert per_record["count"].sum() == N // 50
    sampled = per_record[per_record["record"].notna()]
    assert all(row.value % 50 == 0 for row in sampled.itertuples())
    assert "expected [50], got [51]" in " ".join(per_record["message"])
    partitions = alerts[alerts["tool"] == "golden-partitions"]
    assert set(partitions["operator"]) == {"part"}
    assert sorted(partitions["partition"]) == [0, 1]
    assert all("19]" in m or "39]" in m for m in partitions["message"])


def test_golden_at_its_default_states_the_rate_reached_and_finds_the_planted_records(record):
    code = (f"a = sc.parallelize(range({N}), {PARTS}).map(buggy_parse).setName('parse')"
            ".collect()")
    run = record(code, {"buggy_parse": buggy_parse, "parse": parse}, golden=["parse: parse"])
    assert run.status == "finished", run.error
    rates = run.agent_table("golden").sort_values("partition")
    assert list(rates["partition"]) == list(range(PARTS))
    assert (rates["records"] == SIZE).all() and (rates["budget"] == 0.2).all()
    assert ((rates["tested"] >= 20) & (rates["tested"] <= SIZE)).all()  # 20: the warm-up
    alerts = run.alerts()
    golden = alerts[(alerts["tool"] == "golden") & (alerts["operator"] == "parse")]
    stated = golden[golden["level"] == "info"]
    assert sorted(stated["partition"]) == list(range(PARTS))
    assert all(check.startswith("parse: golden, ") for check in stated["check"])
    found = golden[golden["level"] != "info"]
    # each partition's first record (0, 250, 500, 750) is planted and in the warm-up
    assert set(found["partition"]) == set(range(PARTS))
    assert 0 < found["count"].sum() <= N // 50


def slow_at_350(x):
    """2 ms a record, 0.1 s for record 350 (partition 1, after its first heartbeat)."""
    time.sleep(0.1 if x == 350 else 0.002)
    return x


def test_latency_alerts_on_the_slow_record_and_lists_it_slowest(record):
    run = record("out = sc.parallelize(range(400), 2).map(slow_at_350).setName('slow')"
                 ".collect()", {"slow_at_350": slow_at_350}, latency_factor=10.0)
    assert run.status == "finished", run.error
    alerts = run.alerts()
    latency = alerts[alerts["tool"] == "latency"]
    assert "350" in set(latency["record"])
    slowest = run.latency("slow")
    assert slowest.iloc[0]["record"] == "350" and slowest.iloc[0]["seconds"] >= 0.1
    histogram = run.agent_table("latency")
    assert histogram["records"].sum() == 400


def test_overhead_shows_what_each_agent_costs(record):
    from icedtea_jupyter.agents.overhead import OverheadAgent

    run = record(f"out = sc.parallelize(range({N}), {PARTS}).map(negate_sevens)"
                 ".setName('clean').collect()", {"negate_sevens": negate_sevens},
                 checks=["clean: row >= 0"], agents=[OverheadAgent])
    assert run.status == "finished", run.error
    overhead = run.agent_overhead().set_index(["agent", "operator"])
    check = overhead.loc[("check", "clean")]
    # the check sees lists of rows: fewer calls than records
    assert 1 <= check["calls"] < N and check["records"] == N and check["seconds"] > 0
    assert check["us_per_record"] == pytest.approx(check["seconds"] * 1e6 / N)
    shown = {(g["tool"], g["check"], g["operator"]): g for g in run.alert_groups()}
    line = shown[("overhead", "check's cost", "clean")]  # the panel's and sidebar's line
    assert line["level"] == "info" and line["count"] == 1
    assert line["message"].startswith(f"{check['us_per_record']:.3g} µs a record in check's")
    assert f"{N:,} records" in line["message"]
