"""Table integrity alerts (``--check-table "operator: CHECK"``, repeatable).

Checks over the whole output of an operator, decided by the coordinator side when the
run ends, from each worker's partial aggregate (the latest attempt of each partition):

    unique(FIELD)                 no two output records have the same FIELD
    not_null(FIELD)               no output record has FIELD None (or missing)
    count between A and B         A <= number of output records <= B
    sum(FIELD) between A and B    A <= the sum of FIELD <= B
    monotone(FIELD)               FIELD never decreases, in partition order

FIELD is a name (a Row's or object's attribute, a dict's key) or an index (``0``: the
key of a ``(key, value)`` pair). ``unique`` is exact: each worker sends its distinct
keys (a key whose repr is long, as its SHA-1), the coordinator counts them across
partitions. A failed check is one alert; every check's outcome is in
``run.agent_table("table_checks")``.
"""
from __future__ import annotations

import hashlib
import math
import operator
import re
import threading
from collections import Counter
from collections.abc import Callable
from typing import Any

from ..coordinator.agent import CoordinatorAgent
from ..executor.agent import Agent
from .row_expression import field_getter, split_flag

EXAMPLE = '"detect: unique(id)"'
_NUMBER = r"(-?[0-9][0-9_]*(?:\.[0-9_]+)?(?:[eE][-+]?[0-9]+)?)"
_FIELD = r"([A-Za-z_][A-Za-z0-9_]*|-?[0-9]+)"
_FORMS = {
    "unique": re.compile(rf"unique\(\s*{_FIELD}\s*\)"),
    "not_null": re.compile(rf"not_null\(\s*{_FIELD}\s*\)"),
    "monotone": re.compile(rf"monotone\(\s*{_FIELD}\s*\)"),
    "count": re.compile(rf"count\s+between\s+{_NUMBER}\s+and\s+{_NUMBER}"),
    "sum": re.compile(rf"sum\(\s*{_FIELD}\s*\)\s+between\s+{_NUMBER}\s+and\s+{_NUMBER}"),
}
KEYS_PER_MESSAGE = 5000
MAX_KEY_REPR = 200
SAMPLES = 5
BATCH = 4096  # output rows kept before a fold


def parse_table_check(text: str) -> dict:
    """``"operator: CHECK"`` -> {operator, kind, field, low, high, text}; ValueError
    naming the forms if it is none of them."""
    operator, check = split_flag("--check-table", text, EXAMPLE)
    for kind, form in _FORMS.items():
        match = form.fullmatch(check)
        if match is None:
            continue
        groups = list(match.groups())
        field = None if kind == "count" else groups.pop(0)
        low, high = (float(g.replace("_", "")) for g in groups) if groups else (None, None)
        if low is not None and high is not None and low > high:
            raise ValueError(f"--check-table {text!r}: the range is empty ({low} > {high})")
        return {"operator": operator, "kind": kind, "field": field, "low": low,
                "high": high, "text": f"{operator}: {check}"}
    raise ValueError(f"--check-table {text!r}: {check!r} is not a table check; write one of "
                     "unique(FIELD), not_null(FIELD), monotone(FIELD), count between A and "
                     "B, sum(FIELD) between A and B")


def key_of(value: Any) -> Any:
    """A JSON-able stand-in for a key, equal exactly when the keys are equal."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return int(value) if value.is_integer() else value
    text = repr(value)
    if len(text) > MAX_KEY_REPR:
        return "sha1:" + hashlib.sha1(text.encode()).hexdigest()
    return "repr:" + text


class _Partial:
    """One check's aggregate on one worker, folded from batches of output rows: the
    common case runs in C iterators (a field getter, ``set.update``, ``fsum``, pairwise
    ``<=``); a batch with a failure is walked in Python to find its rows."""

    def __init__(self, check: dict) -> None:
        self.check, self.kind, self.field = check, check["kind"], check["field"]
        self.get = field_getter(self.field) if self.field is not None else None
        self.count = self.unreadable = self.nulls = self.violations = 0
        self.total = 0.0
        self.keys: set = set()
        self.duplicates = 0
        self.first: Any = None
        self.last: Any = None
        self.samples: list[str] = []

    def fold(self, rows: list) -> None:
        self.count += len(rows)
        if self.get is None or not rows:
            return
        values = self._values(rows)
        if self.kind == "not_null":
            self._nulls(rows, values)
        elif self.kind == "sum":
            self._sum(values)
        elif self.kind == "unique":
            self._unique(rows, values)
        else:
            self._monotone(rows, values)

    def _values(self, rows: list) -> list:
        try:
            return list(map(fast_getter(self.field, rows[0]), rows))
        except (AttributeError, KeyError, IndexError, TypeError):
            return [self._read(row) for row in rows]

    def _read(self, row: Any) -> Any:
        assert self.get is not None
        try:
            return self.get(row)
        except (AttributeError, KeyError, IndexError, TypeError):
            self.unreadable += 1
            return None

    def _nulls(self, rows: list, values: list) -> None:
        if values.count(None):
            for row, value in zip(rows, values):
                if value is None:
                    self._failed(row, "nulls")

    def _sum(self, values: list) -> None:
        try:
            self.total += math.fsum(values)
        except TypeError:  # None or text among them: the numbers are summed
            self.total += math.fsum(v for v in values if isinstance(v, (int, float)))

    def _unique(self, rows: list, values: list) -> None:
        if set(map(type, values)) <= {int, str}:  # keys as they are (key_of's identity)
            batch = set(values)
            if len(batch) == len(values) and self.keys.isdisjoint(batch):
                self.keys |= batch  # no key seen twice: the common case
                return
        for row, value in zip(rows, values):  # walk the batch for its duplicates
            key = key_of(value)
            if key in self.keys:
                self._failed(row, "duplicates")
            else:
                self.keys.add(key)

    def _monotone(self, rows: list, values: list) -> None:
        present = [(row, v) for row, v in zip(rows, values) if v is not None] \
            if None in values else list(zip(rows, values))
        if not present:
            return
        ordered = [v for _, v in present]
        if self.first is None:
            self.first = ordered[0]
        elif ordered[0] < self.last:
            self._failed(present[0][0], "violations")
        if not all(map(operator.le, ordered, ordered[1:])):
            for (_, before), (row, value) in zip(present, present[1:]):
                if value < before:
                    self._failed(row, "violations")
        self.last = ordered[-1]

    def _failed(self, row: Any, counter: str) -> None:
        setattr(self, counter, getattr(self, counter) + 1)
        if len(self.samples) < SAMPLES:
            self.samples.append(repr(row)[:500])

    def final(self) -> dict:
        return {"count": self.count, "unreadable": self.unreadable, "nulls": self.nulls,
                "sum": self.total, "duplicates": self.duplicates,
                "violations": self.violations, "first": self.first, "last": self.last,
                "samples": self.samples, "keys": len(self.keys)}


def fast_getter(field: str, example: Any) -> Callable[[Any], Any]:
    """A C getter of ``field`` for rows like ``example``."""
    if field.lstrip("-").isdigit():
        return operator.itemgetter(int(field))
    return operator.itemgetter(field) if isinstance(example, dict) \
        else operator.attrgetter(field)


class TableChecks(Agent):
    """Worker side: a partial aggregate per check of its operator, sent when it ends.
    Output rows wait in a list and are folded in batches (each heartbeat, or every
    ``BATCH`` rows)."""

    name = "check-table"
    options: dict = {"checks": ()}

    def init(self, context: Any) -> None:
        self.partials = {i: _Partial(check) for i, check in
                         enumerate(self.options.get("checks", ()))
                         if check["operator"] == context.operator}
        self.rows: list = []

    def observes(self) -> bool:
        return bool(self.partials)

    def observe_output_rows(self, rows: list) -> None:
        self.rows += rows
        if len(self.rows) >= BATCH:
            self._fold()

    def _fold(self) -> None:
        rows, self.rows = self.rows, []
        for partial in self.partials.values():
            partial.fold(rows)

    def heartbeat(self) -> None:
        self._fold()

    def finish(self) -> None:
        self._fold()
        for i, partial in self.partials.items():
            keys = list(partial.keys)
            for start in range(0, len(keys), KEYS_PER_MESSAGE):
                self.send_to_coordinator({"check": i,
                                          "keys": keys[start:start + KEYS_PER_MESSAGE]})
            self.send_to_coordinator({"check": i, "final": partial.final()})


class TableChecksCoordinator(CoordinatorAgent):
    """Merges the partials of each check's partitions (latest attempt) and decides."""

    def init(self, run: Any) -> None:
        self.checks = list(self.options.get("checks", ()))
        self.finals: dict[int, dict[int, tuple[int, dict]]] = {}  # check -> partition ->
        self.keys: dict[tuple[int, int, int], list] = {}  # (check, partition, attempt)
        self._lock = threading.Lock()

    def receive_message(self, worker: dict, payload: Any) -> None:
        check, partition, attempt = payload["check"], worker["partition"], worker["attempt"]
        with self._lock:
            if "keys" in payload:
                self.keys.setdefault((check, partition, attempt), []).extend(payload["keys"])
                return
            latest = self.finals.setdefault(check, {})
            if partition not in latest or latest[partition][0] <= attempt:
                latest[partition] = (attempt, payload["final"])

    def finish(self) -> None:
        rows = [self.decide(i, check) for i, check in enumerate(self.checks)]
        self.keep("table_checks", rows)
        for row in rows:
            if not row["passed"]:
                self.alert(f"table check failed: {row['detail']}", operator=row["operator"],
                           check=row["check"], level="error", count=row["failures"],
                           samples=row["samples"])

    def decide(self, i: int, check: dict) -> dict:
        """The outcome of check ``i``: passed, failures, detail, samples."""
        with self._lock:
            parts = sorted((p, attempt, final) for p, (attempt, final)
                           in self.finals.get(i, {}).items())
            keys = {p: self.keys.get((i, p, attempt), []) for p, attempt, _ in parts}
        finals = [final for _, _, final in parts]
        samples = [s for final in finals for s in final["samples"]][:SAMPLES]
        kind, failures, detail = check["kind"], 0, ""
        if kind == "count":
            value = sum(f["count"] for f in finals)
            failures = int(not check["low"] <= value <= check["high"])
            detail = f"{value} records, expected between {check['low']:g} and {check['high']:g}"
        elif kind == "sum":
            value = sum(f["sum"] for f in finals)
            failures = int(not check["low"] <= value <= check["high"])
            detail = (f"sum of {check['field']} is {value:g}, expected between "
                      f"{check['low']:g} and {check['high']:g}")
        elif kind == "not_null":
            failures = sum(f["nulls"] for f in finals)
            detail = f"{failures} records with {check['field']} null or missing"
        elif kind == "unique":
            failures, duplicated = _duplicates(finals, keys)
            detail = f"{failures} records repeat a {check['field']} " \
                     f"(e.g. {', '.join(map(repr, duplicated[:5])) or 'within a partition'})"
        else:  # monotone
            failures, detail = _monotone(check["field"], parts)
        return {"check": check["text"], "operator": check["operator"], "kind": kind,
                "passed": failures == 0, "failures": failures, "detail": detail,
                "partitions": len(finals), "samples": samples}


def _duplicates(finals: list[dict], keys: dict[int, list]) -> tuple[int, list]:
    """Records whose key another record has: within partitions, and across them."""
    counts = Counter(key for part in keys.values() for key in part)
    duplicated = [key for key, n in counts.items() if n > 1]
    across = sum(counts[key] - 1 for key in duplicated)
    return sum(f["duplicates"] for f in finals) + across, duplicated


def _monotone(field: str, parts: list[tuple[int, int, dict]]) -> tuple[int, str]:
    failures = sum(final["violations"] for _, _, final in parts)
    bounds = [(p, final["first"], final["last"]) for p, _, final in parts
              if final["first"] is not None]
    breaks = [(p, q) for (p, _, last), (q, first, _) in zip(bounds, bounds[1:])
              if first < last]
    failures += len(breaks)
    where = f"; between partitions {breaks[:5]}" if breaks else ""
    return failures, f"{failures} records where {field} decreases{where}"


TableChecks.coordinator = TableChecksCoordinator
