"""A run's versions bookkeeping while its cell executes: each action's sink is
fingerprinted, answered from an equivalent earlier run (``--reuse``) or run with Spark,
and its result stored once (``results.py``).

Without ``--reuse`` nothing waits for a fingerprint before Spark runs, so the sinks are
fingerprinted in one background thread while the action's job runs (Spark renders a
DataFrame's plan as JSON in tens of ms); the run's end waits for them. With ``--reuse`` a
DataFrame action waits only for its quick keys (``quick.py``, from Spark's tree strings);
the exact fingerprint is computed before the action only for a candidate they match,
otherwise in the background while it runs."""
from __future__ import annotations

import json
import logging
import time
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from . import catalog, plans
from .fingerprint import digest
from .operators import NodePrints, _is_dataframe
from .quick import quick_keys
from .results import ResultStore
from .settings import result_settings, settings_blockers, settings_digest

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
        self.fingerprint_seconds = 0.0  # what the cell waited for fingerprints
        self.search_seconds = 0.0  # --reuse: what actions waited before running or answered
        self.background_seconds = 0.0  # fingerprinting while the actions' jobs ran
        self._background: ThreadPoolExecutor | None = None
        self._pending: list[Future] = []
        self._canonical: dict[int, Any] = {}  # id(sink) -> its canonical plan's digest
        self._exact: dict[int, Any] = {}  # id(sink) -> fills its exact fingerprint (JSON)
        self.collected: dict[int, list] = {}  # node -> what rdd.collect() returned (lineage)
        self.settings: dict[str, str] | None = None  # the last action's (``settings.py``)

    # --- the hook ------------------------------------------------------------------------
    def on_action(self, call: Any) -> Any:
        if call.kind == "write":  # noted by its path; what it wrote is not stored
            value = call.run()
            self.results.append({"action": _describe(call), "kind": "write",
                                 "path": call.path, "reusable": False, "sink": None,
                                 "blockers": ["a write: its files are the result"]})
            return value
        began = time.perf_counter()
        settings = self.settings = result_settings()  # in the cell's thread: ~1 ms
        self.fingerprint_seconds += time.perf_counter() - began
        if not self.reuse:
            return self._run_fingerprinting_meanwhile(call, settings)
        began = time.perf_counter()
        sink = self._fingerprint(call, self.recorder.dag.python_operators, settings,
                                 exact=False)
        found = find_equivalent(self.root, self.run_id, sink, self.exact, self.canonical) \
            if sink["reusable"] else None
        if not sink["reusable"]:
            self.notes.append(f"{sink['action']} computed, not reused: "
                              + "; ".join(sink.get("blockers") or ["no fingerprint"]))
        self.fingerprint_seconds += time.perf_counter() - began
        self.search_seconds += time.perf_counter() - began
        answer = self._answer(sink, found) if found is not None else None
        if answer is not None:
            return answer
        return self._run_fingerprinting_meanwhile(call, settings, sink)

    def _keep_collected(self, call: Any, value: Any) -> None:
        """An RDD's ``collect()``: its records, in partition order, by the RDD's node
        (lineage matches output rows against them: no Spark job to regenerate them)."""
        from ..instrument.patching import node_of

        if call.name == "collect" and not call.args and not _is_dataframe(call.target):
            node = node_of(call.target, self.run_id)
            if node is not None:
                self.collected[node] = value
    def _run_fingerprinting_meanwhile(self, call: Any, settings: dict[str, str],
                                      quick: dict | None = None) -> Any:
        """Run the action while the background thread fingerprints its sink (and its
        canonical plan): the stored result's entry is completed by the run's end.
        ``quick``: the sink as ``--reuse`` searched with it (its exact parts to fill)."""
        sink: dict = quick if quick is not None else \
            {"action": _describe(call), "sink": None, "reusable": False}
        python = self.recorder.dag.python_operators  # those built before the action

        def fill() -> None:
            began = time.perf_counter()
            found = self._fingerprint(call, python, settings) if quick is None else sink
            try:
                self.exact(found)
                self.canonical(found)
            except Exception as exc:  # noqa: BLE001 - no canonical plan: not compared so
                LOG.debug("icedtea: no exact or canonical plan: %s", exc)
            if found is not sink:
                sink.update(found)
            self.background_seconds += time.perf_counter() - began

        if self._background is None:
            self._background = ThreadPoolExecutor(1, thread_name_prefix="icedtea-versions")
        self._pending.append(self._background.submit(fill))
        value = call.run()
        self._store(sink, value, call.kind)
        self._keep_collected(call, value)
        return value

    def _fingerprint(self, call: Any, python: list, settings: dict[str, str],
                     exact: bool = True) -> dict:
        """The sink's fingerprint, or why it has none (never breaks the cell);
        ``exact=False``: a DataFrame's quick keys only (``exact`` fills the rest).
        Its ``settings``: the digest of the session's settings it was computed under
        (every way of finding an equivalent result asks for the same)."""
        try:
            sink = self.sink(call, settings, python, exact)
            sink["settings"] = settings_digest(settings)
        except Exception as exc:  # noqa: BLE001 - never break the cell: it just runs
            LOG.debug("icedtea: no fingerprint for %s: %s", call.name, exc, exc_info=True)
            sink = {"sink": None, "reusable": False,
                    "blockers": [f"no fingerprint: {type(exc).__name__}: {exc}"]}
        sink["action"] = _describe(call)
        return sink

    def _answer(self, sink: dict, found: tuple[Any, dict, str]) -> Any:
        entry, result, reason = found
        if result.get("sink") == sink.get("sink") and result.get("canonical"):
            sink["canonical"] = result["canonical"]  # the same plan: the same canonical one
        try:
            value = ResultStore(self.root).get(result["digest"])
        except Exception as exc:  # noqa: BLE001 - a damaged result: run instead
            self.notes.append(f"could not read {entry.label}'s result: {exc}")
            return None
        origin = result.get("reused_from") or entry.id  # the run that computed it
        self.reused_from = self.reused_from or origin
        sink.update({k: result[k] for k in ("digest", "bytes", "rows", "kind")},
                    reused_from=origin, reason=reason)
        self.results.append(sink)
        where = entry.label if origin == entry.id else f"{entry.label}, stored by run {origin}"
        self.notes.append(f"{sink['action']} answered from {where} (run {entry.id}): {reason}")
        return value

    def _store(self, sink: dict, value: Any, kind: str) -> None:
        try:
            stored = ResultStore(self.root).put(value, kind)
        except Exception as exc:  # noqa: BLE001 - the cell has its value either way
            self.notes.append(f"the result of {sink['action']} was not stored: "
                              f"{type(exc).__name__}: {exc}")
            stored = {}
        sink.update(stored)
        self.results.append(sink)

    # --- fingerprints ----------------------------------------------------------------------
    def sink(self, call: Any, settings: dict[str, str], python: list | None = None,
             exact: bool = True) -> dict:
        """The fingerprint of what the action reads under the session's ``settings``, and
        whether it may be reused (``python``: the cell's Python operators built before
        the action; ``exact``: a DataFrame's exact fingerprint now, else its quick keys
        only)."""
        from ..instrument.patching import node_of

        action = digest(call.name, call.kind, repr(call.args), settings_digest(settings))
        target = call.target
        if _is_dataframe(target):
            python = self.recorder.dag.python_operators if python is None else python
            return self._dataframe_sink(target, action, python, exact,
                                        settings_blockers(settings))
        node = node_of(target, self.run_id)
        if node is None:
            return {"sink": None, "reusable": False,
                    "blockers": ["the action's RDD was made by PySpark's own methods, "
                                 "which icedtea does not follow"]}
        blockers = self.prints.blockers(node) + settings_blockers(settings)
        sink = digest(action, self.prints.tree(node))
        return {"sink": sink, "quick": sink, "reusable": not blockers,
                "blockers": blockers, "operator": self.recorder.dag.node(node).name}

    def _dataframe_sink(self, df: Any, action: str, operators: list, exact: bool,
                        blockers: list[str]) -> dict:
        prints = self.prints
        leaf_prints = prints.leaf_prints()
        python, found = prints.python_parts(operators)
        blockers = found + blockers
        blockers += [r for r in prints.unknown.reasons if r not in blockers]
        if not plans.deterministic(df):
            blockers.append("the plan has non-deterministic expressions")
        keys = quick_keys(df, leaf_prints)
        sink = {"sink": None, "reusable": not blockers, "blockers": blockers,
                "canonical": None, "quick": digest(action, keys["quick"], *python),
                "canonical_quick": digest(action, keys["canonical_quick"], *python),
                "leaves": keys["leaves"]}
        self._exact[id(sink)] = lambda: self._exact_parts(sink, df, action, python,
                                                          leaf_prints)
        if exact:
            self.exact(sink)
        return sink

    def _exact_parts(self, sink: dict, df: Any, action: str, python: list,
                     leaf_prints: dict) -> None:
        """The sink's exact fingerprint (its analyzed plan as JSON), the canonical plan
        to compute on demand, and Drove's segment."""
        plan = plans.analyzed(df)
        sink["sink"] = digest(action, plans.plan_fingerprint(plan, leaf_prints), *python)
        leaves = [leaf_prints.get(plans.leaf_ids(leaf)) for leaf in plans.leaves(plan)]
        if None not in leaves:  # Spark's canonical plan: on demand, or at the run's end
            self._canonical[id(sink)] = lambda: digest(action, canonical_plan(df), *leaves,
                                                       *python)
        try:
            sink["segment"] = plans.segment(plan, leaf_prints).to_json()
        except plans.Unsupported as why:
            sink["segment"], sink["segment_why"] = None, str(why)

    def exact(self, sink: dict) -> str | None:
        """The sink's exact fingerprint (a DataFrame's computed now, if not yet)."""
        fill = self._exact.pop(id(sink), None)
        if fill is not None:
            fill()
        return sink.get("sink")

    def canonical(self, sink: dict) -> str | None:
        """The digest of the sink's canonical plan (Spark's sameSemantics compares them)."""
        self.exact(sink)
        if sink.get("canonical") is None and id(sink) in self._canonical:
            sink["canonical"] = self._canonical.pop(id(sink))()
        return sink.get("canonical")

    def manifest(self) -> dict:
        """What goes into the run's manifest at its end."""
        started = time.perf_counter()
        self._finish_background()
        for result in self.results:
            try:
                self.canonical(result)
            except Exception as exc:  # noqa: BLE001 - no canonical plan: not compared so
                LOG.debug("icedtea: no canonical plan: %s", exc)
        operators = self.prints.manifest()
        self.fingerprint_seconds += time.perf_counter() - started
        return {"fingerprints": operators, "settings": self.settings,
                "results": self.results,
                "reused_from": self.reused_from,
                "fingerprint_seconds": round(self.fingerprint_seconds, 4),
                "reuse_search_seconds": round(self.search_seconds, 4),
                "fingerprint_background_seconds": round(self.background_seconds, 4)}

    def _finish_background(self) -> None:
        for pending in self._pending:
            pending.result()
        self._pending.clear()
        if self._background is not None:
            self._background.shutdown()
            self._background = None


def find_equivalent(root: str, run_id: str, sink: dict, exact: Any = None,
                    canonical: Any = None) -> tuple[Any, dict, str] | None:
    """An earlier run's stored result for an equivalent sink, in Drove's order: identical
    fingerprints, then Spark's canonical plans (sameSemantics), then the SMT check.
    ``exact``/``canonical``: the sink's digests, computed on demand: only for a
    candidate whose quick key matches (or that has none), or for the SMT check when a
    candidate reads one of the same sources."""
    exact = exact or (lambda s: s.get("sink"))
    canonical = canonical or (lambda s: s.get("canonical"))
    candidates = [(entry, result) for entry, result in catalog.reusable(root, run_id)
                  if result.get("action") == sink["action"]
                  and result.get("settings") == sink.get("settings")]
    for entry, result in candidates:
        if result.get("sink") is not None and _may_match(sink, result, "quick") \
                and exact(sink) == result["sink"]:
            return entry, result, "same operators, same sources"
    for entry, result in candidates:
        if result.get("canonical") and _may_match(sink, result, "canonical_quick") \
                and canonical(sink) == result["canonical"]:
            return entry, result, "the same plan by Spark's sameSemantics, same sources"
    provable = [(e, r) for e, r in candidates if r.get("segment")
                and r["segment"].get("leaf") in (sink.get("leaves") or ())]
    if not provable:
        return None
    exact(sink)  # Drove's segment comes with the exact plan
    if sink.get("segment") is None:
        return None
    from .equivalence import equivalent  # z3: loaded when a segment is to be proven

    segment = plans.Segment.from_json(sink["segment"])
    for entry, result in provable:
        if equivalent(segment, plans.Segment.from_json(result["segment"])):
            return entry, result, "equivalent plans (proven by z3), same sources"
    return None


def _may_match(sink: dict, result: dict, key: str) -> bool:
    """Whether the quick ``key`` leaves ``result`` a candidate (either has none: yes)."""
    return sink.get(key) is None or result.get(key) is None or sink[key] == result[key]


def canonical_plan(df: Any) -> str:
    """Spark's canonical form of the analyzed plan (what ``sameSemantics`` compares)."""
    analyzed = df._jdf.queryExecution().analyzed()
    return plans.plan_fingerprint(plans.tree(json.loads(analyzed.canonicalized().toJSON())), {})


def _describe(call: Any) -> str:
    args = ", ".join(repr(a) for a in call.args)
    return f"{call.name}({args})"
