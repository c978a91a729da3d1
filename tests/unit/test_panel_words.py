"""What the in-cell panel says: plurals, a legend for its subscripts, the final rate."""
from types import SimpleNamespace

from icedtea_jupyter.ui.operators import OperatorRows, counts_text
from icedtea_jupyter.ui.panel import RunPanel


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
    row = {"operator": "parse", "done": 4, "running": 0, "failed": 0, "records_in": 400_000,
           "records_out": 400_000, "rate": 0.0, "average_rate": 12_345.0}
    assert "12.3k/s on average" in counts_text(row)
    row.update(done=2, running=2, records_in=1000, records_out=1000, rate=500.0,
               average_rate=400.0)
    assert ", 500/s" in counts_text(row) and "average" not in counts_text(row)


def test_the_operators_are_one_table_a_bar_each_red_on_a_failure_green_once_done():
    rows = OperatorRows()
    progress = [
        {"operator": "parse <x>", "done": 4, "running": 0, "failed": 0, "records_in": 400,
         "records_out": 400, "rate": 0.0, "average_rate": 100.0},
        {"operator": "score", "done": 1, "running": 2, "failed": 1, "records_in": 10,
         "records_out": 9, "rate": 5.0},
        {"operator": "sum", "done": 1, "running": 3, "failed": 0, "records_in": 10,
         "records_out": 9, "rate": 5.0}]
    rows.update(progress)
    table = rows.widget.value
    assert table.count("<tr class='icedtea-operator'") == 3
    assert "<b>parse &lt;x&gt;</b>" in table  # names escaped
    assert "data-state='done'" in table and "value='4' max='4'" in table
    assert "data-operator='score' data-state='failed'" in table and "#d93025" in table
    assert "data-operator='sum' data-state='running'" in table and "value='1' max='4'" in table
    assert "1/4 partitions · in 10 · out 9, 5/s" in table
    sent = []
    rows.widget.observe(lambda change: sent.append(change), names="value")
    rows.update(progress)  # nothing changed: nothing sent
    assert sent == []
