"""One run on disk: ``RunStore`` (the directory's entries are in ``layout.py``).

Every file is written atomically or appended line by line, so a crash loses at most
the line being written. ``pandas.read_feather`` opens the worker files;
``pandas.read_json(path, lines=True)`` the JSON-lines files.
"""
from __future__ import annotations

import json
import os
import secrets
import time
from typing import Any

import pyarrow as pa
import pyarrow.feather as feather

from ..executor.worker_file import worker_schema, write_worker_file
from . import full, layout

FORMAT_VERSION = 1


class StoreError(LookupError):
    """A path that is not a readable run store."""


def new_run_id() -> str:
    return time.strftime("%Y%m%d-%H%M%S") + "-" + secrets.token_hex(3)


class RunStore:
    def __init__(self, path: str) -> None:
        self.path = os.path.abspath(path)
        self.full = full.StoreFull(self.path)  # true once a write failed for want of space
        self._workers = _WorkerFiles()

    @classmethod
    def create(cls, root: str, run_id: str) -> RunStore:
        path = layout.run_dir(root, run_id)
        os.makedirs(layout.workers_dir(path), exist_ok=True)
        with layout.whole_file(layout.store_token_path(path)) as tmp, \
                open(tmp, "w", encoding="utf-8") as out:
            out.write(secrets.token_hex(16))  # what shows a worker it shares this store
        full.set_aside(path)
        return cls(path)

    @property
    def token(self) -> str:
        """The random token written when the run was created ("" for a store from before)."""
        try:
            with open(layout.store_token_path(self.path), encoding="utf-8") as f:
                return f.read().strip()
        except OSError:
            return ""

    @classmethod
    def open(cls, path: str) -> RunStore:
        store = cls(path)
        if not os.path.isfile(layout.manifest_path(store.path)):
            raise StoreError(f"{path!r} is not an icedtea run: it has no {layout.MANIFEST}")
        manifest = store.read_manifest()
        if manifest.get("format") != FORMAT_VERSION:
            raise StoreError(f"{path!r} has store format {manifest.get('format')!r}; "
                             f"this icedtea-jupyter reads format {FORMAT_VERSION}")
        return store

    # --- manifest -----------------------------------------------------------------
    def write_manifest(self, manifest: dict[str, Any]) -> None:
        """Write the manifest atomically. On a full store, the reserve set aside at its
        creation is released and the write tried once more."""
        manifest = dict(manifest, format=FORMAT_VERSION)
        try:
            self._write_manifest(manifest)
        except OSError as exc:
            if not full.is_full(exc):
                raise
            self.full.note(exc)
            self._write_manifest(manifest)

    def _write_manifest(self, manifest: dict[str, Any]) -> None:
        write_json(layout.manifest_path(self.path), manifest, indent=1)

    def read_manifest(self) -> dict[str, Any]:
        try:
            with open(layout.manifest_path(self.path), encoding="utf-8") as f:
                return json.load(f)
        except (OSError, ValueError) as exc:
            raise StoreError(f"cannot read the manifest of {self.path!r}: {exc}") from None

    # --- workers ------------------------------------------------------------------
    def write_worker(self, message: dict) -> str:
        return write_worker_file(self.path, message, local=False)

    def worker_table(self) -> pa.Table:
        """Every recorded task attempt of every worker, successful or not."""
        return self._killed_by_spark(self._workers.table(layout.worker_files(self.path)))

    def _killed_by_spark(self, table: pa.Table) -> pa.Table:
        """``table`` with the attempts the manifest's ``killed_attempts`` names (Spark
        kept another attempt of their task: ``session/spark_attempts.py``) as ``killed``,
        whatever their worker wrote after the run."""
        import pyarrow.compute as pc

        try:
            killed = [a["task"] for a in self.read_manifest().get("killed_attempts") or ()]
        except StoreError:
            return table
        if not killed:
            return table
        is_killed = pc.is_in(table["task"], pa.array(killed, pa.int64()))
        status = pc.if_else(is_killed, pa.scalar("killed"), table["status"])
        return table.set_column(table.schema.get_field_index("status"), "status", status)

    def recorded_inputs(self, operator: int, partition: int) -> list | None:
        """``operator``'s input records on ``partition`` in processing order, from its
        successful task attempt (``--record-inputs``), else, in a failed run, from the
        attempt its error names (up to the failure); None if none were recorded."""
        import pickle

        rows = self.worker_table().to_pylist()
        failed = {row["task"] for row in rows if row["status"] == "failed"}
        ok = {row["task"] for row in rows  # a task attempt counts if no worker of it failed
              if row["operator"] == operator and row["status"] == "ok"
              and row["task"] not in failed}
        files = list(layout.recorded_inputs(self.path, operator, partition))
        chosen = [path for name, path in files if name.task in ok] or \
            [path for name, path in files if self._failed_attempt(name, partition)]
        if not chosen:
            return None
        return [pickle.loads(b) for b in feather.read_table(chosen[0]).column("record")
                .to_pylist()]

    def _failed_attempt(self, name: layout.WorkerName, partition: int) -> bool:
        """Whether ``name`` is of the task attempt a failed run's error names."""
        manifest = self.read_manifest()
        error = manifest.get("error") or {}
        return manifest.get("status") == "failed" and error.get("partition") == partition \
            and (name.stage, name.attempt) == (error.get("stage"), error.get("attempt"))

    # --- alerts and local events ----------------------------------------------------
    def append_alert(self, alert: dict) -> None:
        append_lines(layout.alerts_path(self.path), alert)

    def alerts(self) -> list[dict]:
        return read_lines(layout.alerts_path(self.path))

    def append_agent_rows(self, table: str, rows: list[dict]) -> None:
        """Rows of an agent's table (``agents/<table>.jsonl``, pandas reads it:
        ``pd.read_json(path, lines=True)``)."""
        path = layout.agent_table_path(self.path, table)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        append_lines(path, *rows)

    def agent_rows(self, table: str) -> list[dict]:
        return read_lines(layout.agent_table_path(self.path, table))

    def local_events(self) -> list[dict]:
        events: list[dict] = []
        for path in layout.local_event_files(self.path):
            events.extend(read_lines(path))
        return events

    # --- interactions and snapshots ---------------------------------------------------
    def interactions(self) -> list[dict]:
        """The run's interactions: the final list if the run saved one, else as logged
        (a request's line, then its completion's)."""
        saved = layout.interactions_path(self.path)
        if os.path.exists(saved):
            with open(saved, encoding="utf-8") as f:
                return json.load(f)
        by_index: dict[int, dict] = {}
        for row in read_lines(layout.interactions_log_path(self.path)):
            if "trigger" in row:
                by_index[row["index"]] = row
            elif row.get("index") in by_index:
                by_index[row["index"]].update(row)
        return [by_index[i] for i in sorted(by_index)]

    def snapshot_reports(self) -> list[dict]:
        """Every worker's snapshot report, in arrival order."""
        return read_lines(layout.snapshots_path(self.path))


def write_json(path: str, data: Any, indent: int | None = None) -> None:
    """``data`` as a whole JSON file, atomically (temp file, then rename); a failed write
    (a full disk) leaves neither a half-written file nor its temp file."""
    with layout.whole_file(path) as tmp, open(tmp, "w", encoding="utf-8") as out:
        json.dump(data, out, indent=indent, default=str)


def append_lines(path: str, *rows: dict) -> None:
    """Append ``rows`` to a JSON-lines file in one write."""
    append_encoded(path, encode_lines(*rows))


def encode_lines(*rows: dict) -> list[str]:
    """``rows`` as the lines ``append_lines`` writes (without their newlines)."""
    return [json.dumps(row, default=str) for row in rows]


def append_encoded(path: str, lines: list[str]) -> None:
    """Append lines made by ``encode_lines`` to a JSON-lines file in one write."""
    with open(path, "a", encoding="utf-8") as out:
        out.write("".join(line + "\n" for line in lines))


def read_lines(path: str) -> list[dict]:
    """The objects of a JSON-lines file (none if it is missing; a line cut short by a
    crash is skipped)."""
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


class _WorkerFiles:
    """The worker files' rows, each file read once while it is unchanged (same inode,
    size and modification time; a worker file is written whole, then renamed into
    place). An ended run of 2,400 workers took 1 s a read, at every report after it."""

    def __init__(self) -> None:
        self._files: dict[str, tuple[tuple[int, int, int], pa.Table]] = {}
        self._last: tuple[tuple, pa.Table] | None = None

    def table(self, paths: list[str]) -> pa.Table:
        """The rows of ``paths`` (sorted), as one table."""
        files = {}
        for path in paths:
            try:
                stat = os.stat(path)
            except FileNotFoundError:
                continue  # gone since listed
            key = (stat.st_ino, stat.st_size, stat.st_mtime_ns)
            known = self._files.get(path)
            files[path] = known if known and known[0] == key else (key, feather.read_table(path))
        self._files = files
        whole = tuple((path, key) for path, (key, _) in files.items())
        if self._last is None or self._last[0] != whole:
            tables = [table for _, table in files.values()]
            combined = (pa.concat_tables(tables).combine_chunks() if tables
                        else worker_schema().empty_table())
            self._last = (whole, combined)
        return self._last[1]
