"""The versions in a store root: every run's manifest, read on demand.

A version is a run of a notebook cell. Runs of one cell (JupyterLab's cell id, else a
hash of the cell's text) are numbered v1, v2, ... in the order they started; cells are
numbered in the order their first run appeared in the root. Both numbers are written
into a run's manifest when it starts and never change, also when versions are deleted.
"""
from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass

from ..store import layout
from .results import ResultStore


@dataclass
class Entry:
    """One run of the root, by its manifest."""

    path: str
    manifest: dict

    @property
    def id(self) -> str:
        return self.manifest.get("id", os.path.basename(self.path))

    @property
    def version(self) -> dict:
        return self.manifest.get("version") or {}

    @property
    def label(self) -> str:
        return label(self.version)

    @property
    def results(self) -> list[dict]:
        return list(self.manifest.get("results") or [])


def label(version: dict) -> str:
    if not version:
        return "no version"
    return f"cell {version.get('cell_number')}, v{version.get('number')}"


def entries(root: str) -> list[Entry]:
    """Every run under ``root`` with a readable manifest, oldest first."""
    found = []
    for path in layout.run_dirs(root):
        try:
            with open(layout.manifest_path(path), encoding="utf-8") as f:
                found.append(Entry(path, json.load(f)))
        except (OSError, ValueError):  # a run being written or damaged: not a version
            continue
    return sorted(found, key=lambda e: (e.manifest.get("started") or 0.0, e.id))


def assign(root: str, cell: str) -> dict:
    """The version a new run of ``cell`` (its key) gets under ``root``."""
    known = [e.version for e in entries(root) if e.version]
    mine = [v for v in known if v.get("cell") == cell]
    if mine:
        number = mine[0]["cell_number"]
    else:
        number = max((v.get("cell_number", 0) for v in known), default=0) + 1
    return {"cell": cell, "cell_number": number,
            "number": max((v.get("number", 0) for v in mine), default=0) + 1}


def versions_of(root: str, cell: str) -> list[Entry]:
    return [e for e in entries(root) if e.version.get("cell") == cell]


def by_id(root: str, run_id: str) -> Entry | None:
    return next((e for e in entries(root) if e.id == run_id), None)


def referenced(root: str) -> set[str]:
    return {r["digest"] for e in entries(root) for r in e.results if r.get("digest")}


def reusable(root: str, exclude: str) -> Iterator[tuple[Entry, dict]]:
    """The stored results that may answer another run: of finished runs, deterministic,
    with their file still there."""
    store = ResultStore(root)
    for entry in reversed(entries(root)):  # the newest equivalent first
        if entry.id == exclude or entry.manifest.get("status") != "finished":
            continue
        for result in entry.results:
            if result.get("reusable") and result.get("digest") and \
                    store.exists(result["digest"]):  # none: it was not stored
                yield entry, result


def delete(root: str, run_path: str) -> list[str]:
    """Delete a run's directory, then the results no other run refers to (returned)."""
    run_path = os.path.abspath(run_path)
    if os.path.dirname(run_path) != os.path.abspath(root) or \
            not os.path.isfile(layout.manifest_path(run_path)):
        raise LookupError(f"{run_path!r} is not a run of the store {root!r}")
    shutil.rmtree(run_path)
    return ResultStore(root).collect_garbage(referenced(root))
