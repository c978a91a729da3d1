"""Fingerprints of a cell's DAG, node by node, and of the sinks its actions read.

``NodePrints`` reads what the recorder kept of each node (the user's function, a
source's arguments, a structural operator's arguments, a DataFrame's plan) and gives
each node its parts (``parts``), a Merkle digest of the node and everything upstream
(``tree``) and the reasons nothing built on it may be reused (``blockers``).
"""
from __future__ import annotations

import glob
from typing import Any

from ..instrument.nondeterminism import nondeterminism_warnings
from . import plans
from .fingerprint import Unknown, digest, files_fingerprint, function_parts, value_fingerprint
from .values import readable_values

_READERS = ("load", "parquet", "csv", "json", "text", "orc")


class NodePrints:
    """Fingerprints of the nodes of one recorder's DAG (computed once per node)."""

    def __init__(self, recorder: Any) -> None:
        self.recorder = recorder
        self.unknown = Unknown()
        self._parts: dict[int, dict[str, str]] = {}
        self._blockers: dict[int, list[str]] = {}
        self._trees: dict[int, str] = {}
        self._leaves: dict[frozenset[int], str] = {}
        self._leaf_nodes: set[int] = set()

    # --- per node ------------------------------------------------------------------------
    def parts(self, node_id: int) -> dict[str, str]:
        if node_id not in self._parts:
            before = len(self.unknown.reasons)
            blockers: list[str] = []
            self._parts[node_id] = self._compute(node_id, blockers, exact=True)
            blockers.extend(self.unknown.reasons[before:])
            self._blockers[node_id] = blockers
        return self._parts[node_id]

    def shown_parts(self, node_id: int) -> dict[str, str]:
        """The parts for ``run.diff`` only, the same in every run: a DataFrame
        transformation by its arguments as its ``plan`` (Spark writes a plan's JSON in
        tens of ms; what the sinks compare includes it). Other nodes' parts are the
        sinks' own, computed once (a parallelized list is hashed once a run)."""
        if "source" in self.recorder.details.get(node_id, {}) or \
                not _is_dataframe(self.recorder.outputs.get(node_id)):
            return self.parts(node_id)
        return self._compute(node_id, [], exact=False)

    def _compute(self, node_id: int, blockers: list[str], exact: bool) -> dict[str, str]:
        node = self.recorder.dag.node(node_id)
        details = self.recorder.details.get(node_id, {})
        parts: dict[str, str] = {}
        if node.kind == "python":
            f = dict(self.recorder.functions).get(node_id)
            parts.update(function_parts(f, self.unknown))
            blockers.extend(nondeterminism_warnings(node.name, f))
        if "source" in details:
            parts.update(self._source(node_id, details, blockers))
        elif details:
            shown_plan = not exact and _is_dataframe(self.recorder.outputs.get(node_id))
            parts["plan" if shown_plan else "arguments"] = value_fingerprint(details,
                                                                             self.unknown)
            if node.api == "sample" and len(details.get("args", [])) < 3 and \
                    "seed" not in details.get("kwargs", {}):
                blockers.append(f"{node.name!r} samples without a seed")
        elif node.api == "source":
            parts["made before the cell"] = self._outside(self.recorder.outputs.get(node_id))
        output = self.recorder.outputs.get(node_id)
        if exact and _is_dataframe(output) and "source" not in details:
            parts["plan"] = self.plan(output)
            if not plans.deterministic(output):
                blockers.append(f"{node.name!r} has non-deterministic expressions")
        return parts

    def _source(self, node_id: int, details: dict, blockers: list[str]) -> dict[str, str]:
        api = details["source"]
        arguments = details.get("arguments") or {"args": details.get("args"),
                                                 "kwargs": details.get("kwargs"),
                                                 "options": details.get("options")}
        parts = {"arguments": value_fingerprint(arguments, self.unknown)}
        if api in ("textFile", "wholeTextFiles"):
            names = [p for name in str(arguments.get("name", "")).split(",")
                     for p in (glob.glob(name) or [name])]
            parts["files"] = files_fingerprint(names, self.unknown)
        output = self.recorder.outputs.get(node_id)
        if api in _READERS and _is_dataframe(output):
            parts["files"] = files_fingerprint(output.inputFiles(), self.unknown)
        if api in ("sql", "table"):
            parts["plan"] = self.plan(output)
        datasets = details.get("datasets") or []
        if datasets:
            parts["datasets"] = digest(*(self.dataset(d) for d in datasets))
        return parts

    def _outside(self, obj: Any) -> str:
        """A dataset made before the cell: a DataFrame by its plan and files, an RDD by
        its id in this Spark application (one that reads files cannot be trusted)."""
        if _is_dataframe(obj):
            return digest(self.plan(obj), files_fingerprint(obj.inputFiles(), self.unknown))
        try:
            lineage = obj.toDebugString().decode("utf-8", "replace")
            if "HadoopRDD" in lineage or "FileScan" in lineage:
                return self.unknown.token("an RDD made before the cell reads files")
            return digest("rdd", obj.context.applicationId, obj.id())
        except Exception as exc:  # noqa: BLE001 - anything else is unknown
            return self.unknown.token(f"a dataset made before the cell ({type(exc).__name__})")

    def dataset(self, obj: Any) -> str:
        from ..instrument.patching import node_of

        node = node_of(obj, self.recorder.run.run_id)
        return self.tree(node) if node is not None else self._outside(obj)

    # --- DataFrame plans ---------------------------------------------------------------------
    def leaf_prints(self) -> dict[frozenset[int], str]:
        """The leaves of the cell's DataFrame sources, by their output ids."""
        for node in self.recorder.dag.operators:
            output = self.recorder.outputs.get(node.id)
            if node.id in self._leaf_nodes or not _is_dataframe(output) or \
                    "source" not in self.recorder.details.get(node.id, {}):
                continue
            self._leaf_nodes.add(node.id)
            found = plans.leaves(plans.analyzed(output))
            if len(found) == 1:
                self._leaves[plans.leaf_ids(found[0])] = self.tree(node.id)
        return self._leaves

    def plan(self, df: Any) -> str:
        return plans.plan_fingerprint(plans.analyzed(df), self.leaf_prints())

    # --- upstream --------------------------------------------------------------------------
    def tree(self, node_id: int) -> str:
        """The node and everything upstream of it, as one digest."""
        if node_id not in self._trees:
            node = self.recorder.dag.node(node_id)
            upstream = node.inputs or node.parents
            parts = self.parts(node_id)
            self._trees[node_id] = digest(node.kind, node.api, node.phase,
                                          *sorted(f"{k}={v}" for k, v in parts.items()),
                                          *(self.tree(p) for p in upstream))
        return self._trees[node_id]

    def blockers(self, node_id: int) -> list[str]:
        """Why no result built on the node may be reused (none: it may)."""
        self.tree(node_id)
        node = self.recorder.dag.node(node_id)
        found = list(self._blockers.get(node_id, []))
        for parent in node.inputs or node.parents:
            found.extend(b for b in self.blockers(parent) if b not in found)
        return found

    def python_parts(self, operators: list) -> tuple[list[str], list[str]]:
        """The Python operators' own fingerprints (a DataFrame's plan names its UDFs and
        maps, not their code), and why any of them may not be reused."""
        prints: list[str] = []
        found: list[str] = []
        for node in operators:
            parts = self.parts(node.id)
            prints.append(digest(node.api, node.phase, *sorted(f"{k}={v}"
                                                               for k, v in parts.items())))
            found.extend(b for b in self._blockers.get(node.id, []) if b not in found)
        return prints, found

    def values(self, node_id: int) -> dict[str, str]:
        """A Python operator's readable values (what ``run.diff`` names as changed)."""
        if self.recorder.dag.node(node_id).kind != "python":
            return {}
        try:
            return readable_values(dict(self.recorder.functions).get(node_id))
        except Exception as exc:  # noqa: BLE001 - a value we cannot read: not named
            return {"(unreadable)": f"{type(exc).__name__}"}

    def manifest(self) -> dict:
        """Every node's parts by name, for the manifest (``run.diff`` compares them)."""
        out = {}
        for node in self.recorder.dag.operators:
            try:
                parts = self.shown_parts(node.id)
            except Exception as exc:  # noqa: BLE001 - a node we cannot read: said so
                parts = {"error": self.unknown.token(f"{type(exc).__name__}: {exc}")}
            out[node.name] = {"kind": node.kind, "api": node.api, "parts": parts,
                              "values": self.values(node.id),
                              "source": "source" in self.recorder.details.get(node.id, {})
                              or node.api == "source"}
        return out


def _is_dataframe(obj: Any) -> bool:
    return type(obj).__name__ == "DataFrame" and hasattr(obj, "_jdf")
