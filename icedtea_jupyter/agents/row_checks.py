"""Row integrity alerts (``--check "operator: predicate over row"``, repeatable).

Each output record of the named operator is tested with the predicate, a Python
expression over ``row`` with the builtins (``row.amount >= 0``, ``row[1] is not None``).
Every record that fails it (the predicate is false, or raises) is an alert with the
record and its partition: the first few per check and worker are sent with their
records as they happen, the rest are counted and sent each heartbeat (``count``).
"""
from __future__ import annotations

from typing import Any

from ..executor.agent import Agent
from ..executor.breakpoint_scan import compile_matches
from .alert_sampler import AlertSampler
from .row_expression import row_predicate, split_flag

EXAMPLE = '"detect: row.amount >= 0"'


def parse_check(text: str) -> tuple[str, str]:
    """``"operator: predicate"`` -> (operator, predicate); ValueError if it is not."""
    operator, expression = split_flag("--check", text, EXAMPLE)
    try:
        row_predicate(expression, "--check")
    except SyntaxError as exc:
        raise ValueError(f"--check {text!r}: {expression!r} is not a Python expression: "
                         f"{exc.msg}") from None
    return operator, expression


class RowChecks(Agent):
    """Tests the outputs of the operators that have checks; ``options["checks"]``:
    (operator, predicate) pairs. The rows come in lists (``observe_output_rows``) and
    each check is one compiled loop over a list (``compile_matches``): no Python call
    per row, and the operator keeps its C block loop."""

    name = "check"
    options: dict = {"checks": ()}

    def init(self, context: Any) -> None:
        self.checks = [(compile_matches(f"not ({expression})", "<--check>"),
                        row_predicate(expression, "--check"),
                        AlertSampler(self, f"{operator}: {expression}"))
                       for operator, expression in self.options.get("checks", ())
                       if operator == context.operator]

    def observes(self) -> bool:
        return bool(self.checks)

    def observe_output_rows(self, rows: list) -> None:
        for failing, predicate, sampler in self.checks:
            for index in failing(rows):
                self._failed(predicate, sampler, rows[index])

    @staticmethod
    def _failed(predicate: Any, sampler: AlertSampler, row: Any) -> None:
        try:
            predicate(row)
            message = f"row failed the check {sampler.check!r}"
        except Exception as exc:  # a row the predicate cannot read fails it
            message = f"the check {sampler.check!r} raised {type(exc).__name__}: {exc}"
        sampler.add(message, row)

    def heartbeat(self) -> None:
        for _, _, sampler in self.checks:
            sampler.flush()

    def finish(self) -> None:
        for _, _, sampler in self.checks:
            sampler.flush(final=True)
