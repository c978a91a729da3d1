"""The versions side of a run (Drove): ``run.version``, ``run.versions()``,
``run.diff(other)``, ``run.reused_from``, ``run.delete()``, and ``store_usage()``."""
from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

import pandas as pd

from ..versions import catalog
from ..versions.diff import VersionDiff, diff
from ..versions.results import ResultStore

if TYPE_CHECKING:
    from .run import Run


class RunVersions:
    """Mixed into ``Run``: a run is a version of its notebook cell."""

    manifest: dict

    @property
    def path(self) -> str:  # Run's: the run's store directory
        raise NotImplementedError

    @property
    def root(self) -> str:
        """The store root that holds this run (and the other versions)."""
        return os.path.dirname(self.path)

    @property
    def version(self) -> str:
        """``"cell 7, v4"``: the 4th run of the 7th cell seen in this store."""
        return catalog.label(self.manifest.get("version") or {})

    @property
    def reused_from(self) -> str | None:
        """The run whose stored result answered this one (``--reuse``), or None."""
        return self.manifest.get("reused_from")

    @property
    def results(self) -> list[dict]:
        """This run's actions: what each read (its fingerprint), its stored result's
        digest and size, and where a reused one came from."""
        return [dict(r) for r in self.manifest.get("results") or []]

    def versions(self) -> pd.DataFrame:
        """Every version of this run's cell in the store, oldest first."""
        cell = (self.manifest.get("version") or {}).get("cell")
        return versions_frame(self.root, cell)

    def diff(self, other: Run | str) -> VersionDiff:
        """What changed from ``other`` (a run, or a run id of this store) to this run:
        operators added, removed or changed, sources, code and results."""
        there = _manifest_of(self.root, other)
        change = diff(self.manifest, there, (self.version, catalog.label(there.get("version")
                                                                         or {})), self.root)
        change.counts = side_by_side(operator_counts(self.root, self.manifest),
                                     operator_counts(self.root, there))
        return change

    def export_notebook(self, path: str) -> list[str]:
        """Write this run's debugging session as a notebook that re-executes in a fresh
        kernel (``pytest --nbval`` checks it gives the same states); returns what needs
        the user's hand (also said in the notebook's first cell)."""
        from ..export.notebook import export_notebook
        from . import registry

        def known(run_id: str) -> str | None:  # an earlier cell's run, if this kernel has it
            try:
                return registry.get(run_id).status
            except LookupError:
                return None

        return export_notebook(self, path, known)

    def delete(self) -> list[str]:
        """Delete this run from its store; its results stay while another run refers to
        them. Returns the digests of the results deleted with it."""
        from . import registry

        if self.manifest.get("status") == "running":
            raise RuntimeError("a running run cannot be deleted: wait for it to end")
        kept = getattr(self, "stage_tasks_kept", None)  # a thread writes into its folder
        if kept is not None:  # (session/stage_loads.py): deleted under it, rmtree fails
            kept.wait(STAGE_TASKS_WAIT)
        removed = catalog.delete(self.root, self.path)
        registry.forget(self)  # type: ignore[arg-type]
        return removed


STAGE_TASKS_WAIT = 30.0  # seconds delete() waits for the JVM stages' loads to be written


def _manifest_of(root: str, other: Any) -> dict:
    if hasattr(other, "manifest"):
        return dict(other.manifest)
    entry = catalog.by_id(root, str(other))
    if entry is None:
        raise LookupError(f"no run {other!r} in the store {root!r}")
    return entry.manifest


def operator_counts(root: str, manifest: dict) -> dict[str, tuple[int, int]]:
    """Records in and out of each Python operator of a stored run (successful attempts)."""
    from ..dag import Dag
    from ..store import layout
    from ..store.run_store import RunStore
    from .metrics import metrics_frame

    path = layout.run_dir(root, manifest.get("id", ""))
    if not os.path.isdir(path):
        return {}
    frame = metrics_frame(RunStore(path).worker_table(),
                          Dag.from_json(manifest.get("dag") or {}).names())
    sums = frame.groupby("operator")[["records_in", "records_out"]].sum()
    return {str(op): (int(row.records_in), int(row.records_out)) for op, row in sums.iterrows()}


def side_by_side(here: dict, there: dict) -> list[dict]:
    """One row per operator of either run: its records in and out in both."""
    names = list(here) + [n for n in there if n not in here]
    return [{"operator": n, "here_in": here.get(n, (None, None))[0],
             "here_out": here.get(n, (None, None))[1],
             "there_in": there.get(n, (None, None))[0],
             "there_out": there.get(n, (None, None))[1]} for n in names]


def _combined(results: list[dict]) -> str | None:
    digests = [str(r["digest"]) for r in results if r.get("digest")]
    return "+".join(d[:12] for d in digests) if digests else None


def versions_frame(root: str, cell: str | None) -> pd.DataFrame:
    """The versions of ``cell`` in ``root``: version, run, started, duration, status,
    what changed (since the version before), result, same result as, reused from,
    bytes stored (by results no earlier version had)."""
    entries = catalog.versions_of(root, cell) if cell else []
    labels = {e.id: e.label for e in catalog.entries(root)}
    rows: list[dict] = []
    seen_results: dict[str, str] = {}
    seen_digests: set[str] = set()
    previous: catalog.Entry | None = None
    for entry in entries:
        m = entry.manifest
        result = _combined(entry.results)
        changed = ("first version" if previous is None else
                   diff(m, previous.manifest, (entry.label, previous.label), None,
                        rows=False).summary())
        new = {r["digest"]: r.get("bytes", 0) for r in entry.results
               if r.get("digest") and not r.get("reused_from")}
        stored = sum(b for d, b in new.items() if d not in seen_digests)
        seen_digests.update(new)
        rows.append({"version": entry.label, "run": entry.id,
                     "started": pd.to_datetime(m.get("started"), unit="s"),
                     "duration": (m.get("ended") or m.get("started") or 0) - (m.get("started")
                                                                               or 0),
                     "status": m.get("status"), "changed": changed, "result": result,
                     "same result as": seen_results.get(result) if result else None,
                     "reused from": labels.get(m.get("reused_from") or "", m.get("reused_from")),
                     "bytes stored": stored})
        if result and result not in seen_results:
            seen_results[result] = entry.label
        previous = entry
    return pd.DataFrame(rows, columns=["version", "run", "started", "duration", "status",
                                       "changed", "result", "same result as", "reused from",
                                       "bytes stored"])


def store_usage(root: str | None = None) -> pd.DataFrame:
    """Bytes of stored results per version of a store root (default: the one beside
    this notebook): ``bytes`` (its results), ``own bytes`` (those no other version
    shares), ``shared with`` (the versions sharing one). ``.attrs["total"]`` is the
    bytes on disk, each result counted once."""
    from ..store import layout

    root = os.path.abspath(root or layout.default_root())
    entries = catalog.entries(root)
    holders: dict[str, list[str]] = {}
    for entry in entries:
        for digest in {r["digest"] for r in entry.results if r.get("digest")}:
            holders.setdefault(digest, []).append(entry.label)
    store = ResultStore(root)
    rows = []
    for entry in entries:
        digests = {r["digest"] for r in entry.results if r.get("digest")}
        rows.append({"version": entry.label, "run": entry.id,
                     "results": len(digests),
                     "bytes": sum(store.size(d) for d in digests),
                     "own bytes": sum(store.size(d) for d in digests if len(holders[d]) == 1),
                     "shared with": sorted({h for d in digests for h in holders[d]}
                                           - {entry.label})})
    frame = pd.DataFrame(rows, columns=["version", "run", "results", "bytes", "own bytes",
                                        "shared with"])
    frame.attrs["total"] = sum(store.size(d) for d in layout.result_digests(root))
    return frame
