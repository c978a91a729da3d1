"""What the in-cell panel says: plurals, a legend for its subscripts, the final rate."""
from types import SimpleNamespace

from icedtea_jupyter.ui.panel import OperatorRow, RunPanel


def interaction(index: int, trigger: str) -> SimpleNamespace:
    return SimpleNamespace(index=index, trigger=trigger, time=0.0)


def timeline(interactions: list) -> str:
    theta = SimpleNamespace(name="enrich")
    panel = SimpleNamespace(run=SimpleNamespace(dag=SimpleNamespace(interesting=theta)))
    return RunPanel._timeline(panel, interactions)


def test_one_interaction_is_singular_and_the_subscripts_have_a_legend():
    text = timeline([interaction(0, "initial")])
    assert "1 interaction:" in text and "interactions" not in text
    assert "I0<sub>i</sub>" in text and "(<sub>i</sub> initial)" in text
    text = timeline([interaction(0, "initial"), interaction(1, "condition"), interaction(2, "manual")])
    assert "3 interactions:" in text
    assert "(<sub>i</sub> initial, <sub>m</sub> manual, <sub>c</sub> condition)" in text


def test_an_ended_operator_shows_its_average_rate():
    row = OperatorRow("parse")
    row.update({"done": 4, "running": 0, "failed": 0, "records_in": 400_000,
                "records_out": 400_000, "rate": 0.0, "average_rate": 12_345.0})
    assert "12.3k/s on average" in row.counts.value
    row.update({"done": 2, "running": 2, "failed": 0, "records_in": 1000, "records_out": 1000,
                "rate": 500.0, "average_rate": 400.0})
    assert ", 500/s" in row.counts.value and "average" not in row.counts.value
