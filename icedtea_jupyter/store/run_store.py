"""One run on disk.

Layout of ``<root>/<run-id>/``::

    manifest.json            run id, status, options, cell source, DAG, error, warnings
    workers/op{o}-p{p}-s{s}-a{a}-t{t}.arrow   one row per task attempt of a worker
    alerts.jsonl             alerts, one JSON object per line, in arrival order
    local/*.jsonl            what workers that had no coordinator recorded themselves

Every file is written atomically or appended line by line, so a crash loses at most
the line being written. ``pandas.read_feather`` opens the worker files;
``pandas.read_json(path, lines=True)`` the JSON-lines files.
"""
from __future__ import annotations

import glob
import json
import os
import secrets
import time
from typing import Any

import pyarrow as pa
import pyarrow.feather as feather

from ..executor.worker_file import (LOCAL_EVENTS_DIR, WORKERS_DIR, worker_schema,
                                    write_worker_file)

FORMAT_VERSION = 1
MANIFEST = "manifest.json"


class StoreError(LookupError):
    """A path that is not a readable run store."""


def new_run_id() -> str:
    return time.strftime("%Y%m%d-%H%M%S") + "-" + secrets.token_hex(3)


class RunStore:
    def __init__(self, path: str) -> None:
        self.path = os.path.abspath(path)

    @classmethod
    def create(cls, root: str, run_id: str) -> "RunStore":
        path = os.path.join(root, run_id)
        os.makedirs(os.path.join(path, WORKERS_DIR), exist_ok=True)
        return cls(path)

    @classmethod
    def open(cls, path: str) -> "RunStore":
        store = cls(path)
        if not os.path.isfile(os.path.join(store.path, MANIFEST)):
            raise StoreError(f"{path!r} is not an icedtea run: it has no {MANIFEST}")
        manifest = store.read_manifest()
        if manifest.get("format") != FORMAT_VERSION:
            raise StoreError(f"{path!r} has store format {manifest.get('format')!r}; "
                             f"this icedtea-jupyter reads format {FORMAT_VERSION}")
        return store

    # --- manifest -----------------------------------------------------------------
    def write_manifest(self, manifest: dict[str, Any]) -> None:
        manifest = dict(manifest, format=FORMAT_VERSION)
        target = os.path.join(self.path, MANIFEST)
        tmp = f"{target}.tmp"
        with open(tmp, "w", encoding="utf-8") as out:
            json.dump(manifest, out, indent=1, default=str)
        os.replace(tmp, target)

    def read_manifest(self) -> dict[str, Any]:
        try:
            with open(os.path.join(self.path, MANIFEST), encoding="utf-8") as f:
                return json.load(f)
        except (OSError, ValueError) as exc:
            raise StoreError(f"cannot read the manifest of {self.path!r}: {exc}") from None

    # --- workers ------------------------------------------------------------------
    def write_worker(self, message: dict) -> str:
        return write_worker_file(self.path, message, local=False)

    def worker_table(self) -> pa.Table:
        """Every recorded task attempt of every worker, successful or not."""
        files = sorted(glob.glob(os.path.join(self.path, WORKERS_DIR, "*.arrow")))
        tables = [feather.read_table(f) for f in files]
        if not tables:
            return worker_schema().empty_table()
        return pa.concat_tables(tables)

    # --- alerts and local events ----------------------------------------------------
    def append_alert(self, alert: dict) -> None:
        with open(os.path.join(self.path, "alerts.jsonl"), "a", encoding="utf-8") as out:
            out.write(json.dumps(alert, default=str) + "\n")

    def alerts(self) -> list[dict]:
        return _read_lines(os.path.join(self.path, "alerts.jsonl"))

    def local_events(self) -> list[dict]:
        events: list[dict] = []
        for path in sorted(glob.glob(os.path.join(self.path, LOCAL_EVENTS_DIR, "*.jsonl"))):
            events.extend(_read_lines(path))
        return events


def _read_lines(path: str) -> list[dict]:
    if not os.path.exists(path):
        return []
    rows = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            try:
                rows.append(json.loads(line))
            except ValueError:
                continue  # a line cut by a crash
    return rows
