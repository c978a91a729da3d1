"""--check-table: the syntax, and the coordinator's decisions from partial aggregates."""
import pytest

from icedtea_jupyter.agents.row_checks import parse_check
from icedtea_jupyter.agents.table_checks import (
    TableChecks,
    TableChecksCoordinator,
    parse_table_check,
)


@pytest.mark.parametrize("text, kind, field, low, high", [
    ("op: unique(id)", "unique", "id", None, None),
    ("op:not_null( amount )", "not_null", "amount", None, None),
    ("op: monotone(0)", "monotone", "0", None, None),
    ("op: count between 10 and 1_000", "count", None, 10, 1000),
    ("op: sum(amount) between -5 and 2.5e3", "sum", "amount", -5, 2500),
])
def test_each_form_parses(text, kind, field, low, high):
    check = parse_table_check(text)
    assert (check["operator"], check["kind"], check["field"]) == ("op", kind, field)
    assert (check["low"], check["high"]) == (low, high)


@pytest.mark.parametrize("text, says", [
    ("unique(id)", "operator: ..."),
    ("op: uniq(id)", "unique(FIELD), not_null(FIELD)"),
    ("op: count between 5 and 1", "the range is empty"),
    ("op: sum(x) between a and b", "is not a table check"),
])
def test_bad_checks_say_what_to_write(text, says):
    with pytest.raises(ValueError, match=r"--check-table") as error:
        parse_table_check(text)
    assert says in str(error.value)


def test_a_row_check_must_be_an_expression():
    assert parse_check("op: row.x > 1") == ("op", "row.x > 1")
    with pytest.raises(ValueError, match="not a Python expression"):
        parse_check("op: row.x >")


def decide(texts, partitions, attempts=None, batched=False):
    """Run the worker side on each partition's rows, the coordinator on what they send."""
    checks = tuple(parse_table_check(t) for t in texts)
    coordinator = TableChecksCoordinator()
    coordinator.options = {"checks": checks}
    alerts, kept = [], []
    coordinator._alert, coordinator._keep = alerts.append, lambda t, rows: kept.extend(rows)
    coordinator.init(None)
    agent_class = TableChecks.with_options(checks=checks)
    for partition, rows in partitions.items():
        for attempt in (attempts or {}).get(partition, [0]):
            agent = agent_class()
            sent = []
            agent._send = lambda fields, sent=sent: sent.append(fields["payload"])
            agent.init(type("Context", (), {"operator": "op"})())
            for row in rows:
                agent.observe_output_rows([row])
                if not batched:
                    agent.heartbeat()  # a fold per record: batches of one
            agent.finish()
            worker = {"partition": partition, "attempt": attempt, "operator_name": "op"}
            for payload in sent:
                coordinator.receive_message(worker, payload)
    coordinator.finish()
    return {row["check"]: row for row in kept}, alerts


def test_unique_keys_are_exact_across_partitions_and_within_them():
    rows, alerts = decide(["op: unique(0)"], {0: [(1,), (2,), (2,)], 1: [(3,), (1,)],
                                              2: [(4,)]})
    assert rows["op: unique(0)"]["failures"] == 2  # 2 twice in p0, 1 in p0 and p1
    (alert,) = alerts
    assert alert["check"] == "op: unique(0)" and alert["count"] == 2


def test_monotone_holds_across_partitions_in_partition_order():
    rows, _ = decide(["op: monotone(0)"], {0: [(1,), (2,)], 1: [], 2: [(3,), (5,)]})
    assert rows["op: monotone(0)"]["passed"]
    rows, _ = decide(["op: monotone(0)"], {0: [(1,), (9,)], 1: [(3,), (2,)]})
    assert rows["op: monotone(0)"]["failures"] == 2  # 9 then 3 across, 3 then 2 within


def test_count_and_sum_ranges_and_nulls():
    rows, alerts = decide(["op: count between 3 and 4", "op: sum(1) between 0 and 10",
                           "op: not_null(1)"],
                          {0: [("a", 5), ("b", None)], 1: [("c", 7), ("d", 1)]})
    assert rows["op: count between 3 and 4"]["passed"] is True
    assert rows["op: sum(1) between 0 and 10"]["detail"].startswith("sum of 1 is 13")
    assert rows["op: not_null(1)"]["failures"] == 1
    assert {a["check"] for a in alerts} == {"op: sum(1) between 0 and 10", "op: not_null(1)"}


def test_a_retried_partition_counts_once():
    rows, _ = decide(["op: count between 4 and 4", "op: unique(0)"],
                     {0: [(1,), (2,)], 1: [(3,), (4,)]}, attempts={1: [0, 1]})
    assert rows["op: count between 4 and 4"]["passed"] and rows["op: unique(0)"]["passed"]


def test_a_batch_with_a_failure_finds_its_rows_and_counts_them_once():
    rows = [{"id": i % 50, "ts": i if i != 70 else 3, "v": None if i == 90 else 1}
            for i in range(100)]
    checks = ("op: unique(id)", "op: monotone(ts)", "op: not_null(v)", "op: sum(v) between 0 and 99")
    outcome, alerts = decide(checks, {0: rows}, batched=True)
    assert outcome["op: unique(id)"]["failures"] == 50
    assert outcome["op: monotone(ts)"]["failures"] == 1  # 3 after 69 (71 after 3 is a rise)
    assert outcome["op: not_null(v)"]["failures"] == 1
    assert outcome["op: sum(v) between 0 and 99"]["passed"]  # 99: the None is not summed
    assert {a["check"] for a in alerts} == set(checks) - {"op: sum(v) between 0 and 99"}
