"""A run's versions bookkeeping while its cell executes: each action's sink is
fingerprinted, answered from an equivalent earlier run (``--reuse``) or run with Spark,
and its result stored once (``results.py``)."""
from __future__ import annotations

import json
import logging
import time
from typing import Any

from . import catalog, plans
from .equivalence import equivalent
from .fingerprint import digest
from .operators import NodePrints, _is_dataframe
from .results import ResultStore

LOG = logging.getLogger("icedtea_jupyter")


class VersionTracker:
    """Runs the actions of one recording cell (the recorder's ``on_action``)."""

    def __init__(self, root: str, run_id: str, recorder: Any, reuse: bool) -> None:
        self.root, self.run_id, self.reuse = root, run_id, reuse
        self.recorder = recorder
        self.prints = NodePrints(recorder)
        self.results: list[dict] = []
        self.reused_from: str | None = None
        self.notes: list[str] = []
        self.fingerprint_seconds = 0.0

    # --- the hook ------------------------------------------------------------------------
    def on_action(self, call: Any) -> Any:
        began = time.perf_counter()
        try:
            sink = self.sink(call)
        except Exception as exc:  # noqa: BLE001 - never break the cell: it just runs
            LOG.debug("icedtea: no fingerprint for %s: %s", call.name, exc, exc_info=True)
            sink = {"sink": None, "reusable": False,
                    "blockers": [f"no fingerprint: {type(exc).__name__}: {exc}"]}
        sink["action"] = _describe(call)
        self.fingerprint_seconds += time.perf_counter() - began
        if self.reuse and sink["reusable"]:
            answer = self._answer(sink)
            if answer is not None:
                return answer
        value = call.run()
        self._store(sink, value, call.kind)
        return value

    def _answer(self, sink: dict) -> Any:
        found = find_equivalent(self.root, self.run_id, sink)
        if found is None:
            return None
        entry, result, reason = found
        try:
            value = ResultStore(self.root).get(result["digest"])
        except Exception as exc:  # noqa: BLE001 - a damaged result: run instead
            self.notes.append(f"could not read {entry.label}'s result: {exc}")
            return None
        self.reused_from = self.reused_from or entry.id
        self.results.append(dict(sink, **{k: result[k] for k in ("digest", "bytes", "rows",
                                                                  "kind")},
                                 reused_from=entry.id, reason=reason))
        self.notes.append(f"{sink['action']} answered from {entry.label} "
                          f"(run {entry.id}): {reason}")
        return value

    def _store(self, sink: dict, value: Any, kind: str) -> None:
        try:
            stored = ResultStore(self.root).put(value, kind)
        except Exception as exc:  # noqa: BLE001 - the cell has its value either way
            self.notes.append(f"the result of {sink['action']} was not stored: "
                              f"{type(exc).__name__}: {exc}")
            stored = {}
        self.results.append(dict(sink, **stored))

    # --- fingerprints ----------------------------------------------------------------------
    def sink(self, call: Any) -> dict:
        """The fingerprint of what the action reads, and whether it may be reused."""
        from ..instrument.patching import node_of

        action = digest(call.name, call.kind, repr(call.args))
        target = call.target
        if _is_dataframe(target):
            return self._dataframe_sink(target, action)
        node = node_of(target, self.run_id)
        if node is None:
            return {"sink": None, "reusable": False,
                    "blockers": ["the action's RDD was made by PySpark's own methods, "
                                 "which icedtea does not follow"]}
        blockers = self.prints.blockers(node)
        return {"sink": digest(action, self.prints.tree(node)), "reusable": not blockers,
                "blockers": blockers, "operator": self.recorder.dag.node(node).name}

    def _dataframe_sink(self, df: Any, action: str) -> dict:
        prints = self.prints
        plan = plans.analyzed(df)
        leaf_prints = prints.leaf_prints()
        python = prints.python_trees()
        blockers = prints.python_blockers() + list(prints.unknown.reasons)
        if not plans.deterministic(df):
            blockers.append("the plan has non-deterministic expressions")
        sink = {"sink": digest(action, plans.plan_fingerprint(plan, leaf_prints), *python),
                "reusable": not blockers, "blockers": blockers}
        canonical = json.loads(df._jdf.queryExecution().analyzed().canonicalized().toJSON())
        leaves = [leaf_prints.get(plans.leaf_ids(leaf), "?") for leaf in plans.leaves(plan)]
        sink["canonical"] = digest(action, plans.plan_fingerprint(plans.tree(canonical), {}),
                                   *leaves, *python)
        if "?" in leaves:
            sink["canonical"] = None  # a leaf of unknown content: no identity across runs
        try:
            sink["segment"] = plans.segment(plan, leaf_prints).to_json()
            sink["segment_action"] = action
        except plans.Unsupported as why:
            sink["segment"], sink["segment_why"] = None, str(why)
        return sink

    def manifest(self) -> dict:
        """What goes into the run's manifest at its end."""
        started = time.perf_counter()
        operators = self.prints.manifest()
        self.fingerprint_seconds += time.perf_counter() - started
        return {"fingerprints": operators, "results": self.results,
                "reused_from": self.reused_from,
                "fingerprint_seconds": round(self.fingerprint_seconds, 4)}


def find_equivalent(root: str, run_id: str, sink: dict) -> tuple[Any, dict, str] | None:
    """An earlier run's stored result for an equivalent sink, in Drove's order: identical
    fingerprints, then Spark's canonical plans (sameSemantics), then the SMT check."""
    later: list[tuple[Any, dict]] = []
    for entry, result in catalog.reusable(root, run_id):
        if result.get("action") != sink["action"]:
            continue
        if sink["sink"] is not None and result.get("sink") == sink["sink"]:
            return entry, result, "same operators, same sources"
        later.append((entry, result))
    canonical = sink.get("canonical")
    for entry, result in later:
        if canonical and result.get("canonical") == canonical:
            return entry, result, "the same plan by Spark's sameSemantics, same sources"
    mine = sink.get("segment")
    if mine is None:
        return None
    segment = plans.Segment.from_json(mine)
    for entry, result in later:
        theirs = result.get("segment")
        if theirs and result.get("segment_action") == sink.get("segment_action") and \
                equivalent(segment, plans.Segment.from_json(theirs)):
            return entry, result, "equivalent plans (proven by z3), same sources"
    return None


def _describe(call: Any) -> str:
    args = ", ".join(repr(a) for a in call.args)
    return f"{call.name}({args})"
