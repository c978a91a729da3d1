"""``run.diff(other)``: what changed between two versions, from their manifests."""
from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from .results import ResultStore
from .values import changed_values

# a part's name -> what a user calls a change of it
_WHAT = {"code": "code", "closure": "closure values", "globals": "globals read",
         "class": "class", "attributes": "attributes", "plan": "DataFrame plan",
         "arguments": "arguments", "files": "files", "datasets": "inputs",
         "made before the cell": "data made before the cell", "self": "bound object"}


@dataclass
class ResultDiff:
    """One action's results in both versions; ``only_here``/``only_there``: the rows in
    one result only (None where a result is not a table of rows)."""

    action: str
    same: bool
    here: str | None
    there: str | None
    only_here: pd.DataFrame | None = None
    only_there: pd.DataFrame | None = None


@dataclass
class VersionDiff:
    """Operators added, removed and changed (name -> the parts that changed), the sources
    that changed, the cells' code diff, the results and each Python operator's records in
    and out side by side."""

    here: str
    there: str
    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    changed: dict[str, list[str]] = field(default_factory=dict)
    values: dict[str, list[str]] = field(default_factory=dict)  # "Gap.GAP: 10 → 3"
    settings: list[str] = field(default_factory=list)  # "spark.sql.ansi.enabled: …"
    sources: list[str] = field(default_factory=list)
    code: str = ""
    results: list[ResultDiff] = field(default_factory=list)
    counts: list[dict] = field(default_factory=list)  # per operator, records in/out in both

    @property
    def same_result(self) -> bool:
        return bool(self.results) and all(r.same for r in self.results)

    def summary(self) -> str:
        """One line: what changed (``versions()``'s "what changed" column)."""
        bits = [f"+{name}" for name in self.added] + [f"-{name}" for name in self.removed]
        bits += [f"{name}: {', '.join(parts)}" + _named(self.values.get(name))
                 for name, parts in self.changed.items() if name not in self.sources]
        bits += [f"source {name}: {', '.join(self.changed.get(name, ['changed']))}"
                 for name in self.sources]
        bits += [f"setting {change}" for change in self.settings]
        if not bits and self.code:
            bits.append("code (same operators)")
        return "; ".join(bits) or "nothing"

    def to_json(self) -> dict:
        return {"here": self.here, "there": self.there, "added": self.added,
                "removed": self.removed, "changed": self.changed, "values": self.values,
                "settings": self.settings, "sources": self.sources,
                "code": self.code, "summary": self.summary(), "counts": self.counts,
                "results": [{"action": r.action, "same": r.same, "here": r.here,
                             "there": r.there,
                             "only_here": _records(r.only_here),
                             "only_there": _records(r.only_there)} for r in self.results]}

    def __repr__(self) -> str:
        results = ", ".join(f"{r.action}: {'same' if r.same else 'different'}"
                            for r in self.results) or "none"
        return f"<VersionDiff {self.here} vs {self.there}: {self.summary()}; results: {results}>"


def diff(here: dict, there: dict, labels: tuple[str, str], root: str | None,
         rows: bool = True) -> VersionDiff:
    """Compare two manifests; ``root`` (the result store) gives the rows that differ."""
    mine, theirs = here.get("fingerprints") or {}, there.get("fingerprints") or {}
    out = VersionDiff(*labels)
    out.added = [n for n in mine if n not in theirs]
    out.removed = [n for n in theirs if n not in mine]
    for name in mine:
        if name not in theirs:
            continue
        a, b = mine[name].get("parts", {}), theirs[name].get("parts", {})
        parts = sorted({_WHAT.get(k, k) for k in set(a) | set(b) if a.get(k) != b.get(k)})
        if parts:
            out.changed[name] = parts
            if mine[name].get("source"):
                out.sources.append(name)
            values = changed_values(theirs[name].get("values") or {},
                                    mine[name].get("values") or {})
            if values:
                out.values[name] = values
    if here.get("settings") and there.get("settings"):  # none: older, or no action
        out.settings = changed_values(there["settings"], here["settings"])
    out.code = "".join(difflib.unified_diff(
        (there.get("cell") or "").splitlines(True), (here.get("cell") or "").splitlines(True),
        labels[1], labels[0]))
    store = ResultStore(root) if root and rows else None
    for a, b in zip(_results(here), _results(there)):
        same = a.get("digest") == b.get("digest")
        entry = ResultDiff(a["action"], same, a.get("digest"), b.get("digest"))
        if not same and store is not None and a.get("digest") and b.get("digest"):
            entry.only_here, entry.only_there = _rows_only(store, a, b)
        out.results.append(entry)
    return out


def _named(values: list[str] | None) -> str:
    return f" ({'; '.join(values)})" if values else ""


def _results(manifest: dict) -> list[dict]:
    """The stored results, in action order (a write's files are not stored: left out)."""
    return [r for r in manifest.get("results") or [] if r.get("action") and
            r.get("kind") != "write"]


def _frame(value: Any) -> pd.DataFrame | None:
    if isinstance(value, pd.DataFrame):
        return value.reset_index(drop=True)
    if isinstance(value, list):
        rows = [r.asDict() if hasattr(r, "asDict") else
                (dict(enumerate(r)) if isinstance(r, tuple) else {"value": r}) for r in value]
        frame = pd.DataFrame(rows)
        frame.columns = [str(c) for c in frame.columns]
        return frame
    return None


def _rows_only(store: ResultStore, a: dict, b: dict) -> tuple[Any, Any]:
    try:
        left, right = _frame(store.get(a["digest"])), _frame(store.get(b["digest"]))
    except LookupError:
        return None, None
    if left is None or right is None or list(left.columns) != list(right.columns):
        return None, None
    key = list(left.columns)
    try:
        merged = left.astype(str).merge(right.astype(str), on=key, how="outer", indicator=True)
    except (TypeError, ValueError):
        return None, None
    here = merged[merged["_merge"] == "left_only"].drop(columns="_merge")
    there = merged[merged["_merge"] == "right_only"].drop(columns="_merge")
    return here.reset_index(drop=True), there.reset_index(drop=True)


def _records(frame: pd.DataFrame | None, limit: int = 100) -> list[dict] | None:
    return None if frame is None else frame.head(limit).to_dict("records")
