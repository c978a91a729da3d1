"""What cannot arrive is named: a ``--lineage`` or ``--skew`` run whose workers' artifacts
are missing from the store says which, from which hosts, and the fix (never "recorded
without --lineage" of a run that was recorded with it).

Reads the manifest (``options``, ``hosts``: each worker host's check of the store,
``executor/store_check.py``), the successful task attempts (the worker table) and the
alerts workers sent when an artifact did not reach the store (``source: artifacts``).
"""
from __future__ import annotations

from typing import Any

from ..executor.lineage import RDD_APIS
from ..executor.skew import keyed_worker
from . import layout

FIX = ("Fix: let every executor reach the coordinator (%%icedtea --bind ADDRESS, an address "
       "of the driver they can connect to), so that their files travel over the control "
       "channel; or give the run a store every executor can write (--store on a shared "
       "filesystem); then run the cell again")
STORE_FIX = ("Fix: the kernel could not write them into the run store: make it writable "
             "(free space, permissions) and run the cell again")


def hosts_note(manifest: dict) -> str:
    """The worker hosts and what they found of the store."""
    hosts = manifest.get("hosts") or {}
    if not hosts:
        return "no worker host reached the coordinator"
    return "worker hosts: " + "; ".join(
        f"{host}: {'shared the store' if view == 'shared' else 'did not share it (' + view + ')'}"
        for host, view in sorted(hosts.items()))


def executors_share(manifest: dict) -> bool:
    """Whether every worker host found the store's token (a store from before hosts were
    kept: assumed, as it was then)."""
    return all(view == "shared" for view in (manifest.get("hosts") or {}).values())


def _alerts(store: Any, kind: str) -> list[dict]:
    return [a for a in store.alerts()
            if a.get("source") == "artifacts" and a.get("artifact") == kind]


def workers_said(store: Any, kind: str) -> str:
    """What the workers' alerts said of ``kind``'s files (``executor/artifacts.cannot``),
    and the fix (the store's, if the coordinator refused every one of them)."""
    alerts = _alerts(store, kind)
    if not alerts:
        return FIX
    first, times = alerts[0], f" ({len(alerts)} alerts)" if len(alerts) > 1 else ""
    fix = STORE_FIX if all(a.get("refused") for a in alerts) else FIX
    return f"The workers said{times}: {first.get('host')}: {first.get('reason')}. {fix}"


def _ok_workers(store: Any) -> list[dict]:
    return [row for row in store.worker_table().to_pylist() if row["status"] == "ok"]


def _named(names: dict[int, str], ops: set[int]) -> str:
    return ", ".join(repr(names.get(op, str(op))) for op in sorted(ops))


def missing_lineage(store: Any, manifest: dict, dag: Any) -> str | None:
    """Why a ``--lineage`` run has no lineage links because they could not arrive (None:
    it has some, or it was recorded without --lineage, or every worker host shared the
    store and none said it failed, or no operator that captures them finished)."""
    if not (manifest.get("options") or {}).get("lineage") or \
            any(True for _ in layout.lineage_files(store.path)):
        return None
    if executors_share(manifest) and not _alerts(store, "lineage"):
        return None  # every host wrote the store itself: not a matter of delivery
    capturing = {n.id for n in dag.python_operators if n.api in RDD_APIS}
    ok = [row for row in _ok_workers(store) if row["operator"] in capturing]
    if not ok:
        return None
    return (f"run {store.path!r} was recorded with --lineage, but no worker's lineage links "
            f"reached its store: the links of {len(ok)} successful task attempt(s) of "
            f"{_named(dag.names(), {row['operator'] for row in ok})} are missing "
            f"({hosts_note(manifest)}). {workers_said(store, 'lineage')}")


def missing_skew(store: Any, manifest: dict, dag: Any) -> str | None:
    """Why a ``--skew`` run has no heavy-key sketch of its key-partitioned operators (None:
    it has some, or nothing to count, or it was recorded without --skew)."""
    if not (manifest.get("options") or {}).get("skew"):
        return None
    keyed = {n.id for n in dag.python_operators if keyed_worker(n)}
    if not keyed or any(name.operator in keyed for name, _ in layout.skew_files(store.path)):
        return None
    ran = {row["operator"] for row in _ok_workers(store)} & keyed
    if not ran:
        return None
    said = (workers_said(store, "skew") if _alerts(store, "skew") or not
            executors_share(manifest) else "The run's alerts say why, if a worker failed")
    return (f"this run was recorded with --skew, but no heavy-key sketch of "
            f"{_named(dag.names(), ran)} reached its store: its key table is empty "
            f"({hosts_note(manifest)}). {said}")
