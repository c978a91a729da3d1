"""The layout of the run store: every entry of a run directory, its name, its parsing.

This module is the only one that builds a path inside a run directory or reads a
file's name back. It imports only the standard library: Spark's Python workers use it
to write their own files. One directory per run, ``<root>/<run-id>/``, where the root
is ``--store DIR`` or ``.icedtea/runs`` beside the notebook::

    manifest.json             run id, status, options, cell, DAG, error, warnings, jobs,
                              checkpoint summary, hosts (store/run_store.py)
    .store-token              a random token the kernel writes when it creates the run:
                              a worker that reads it shares the store and writes its
                              artifacts here itself; else they travel over the control
                              channel (executor/artifacts.py)
    workers/<worker>.arrow    one row per task attempt of a worker (executor/worker_file.py)
    local/<worker>.jsonl      agent messages and alerts of a worker that could not reach
                              the coordinator, for the coordinator to take at the end
    alerts.jsonl              alerts, in arrival order
    agents/<table>.jsonl      rows an agent's coordinator side keeps, one table each:
                              quarantine (--tolerate), latency, overhead, load_timeline
                              (each worker's records in over time; agents/)
    logs/<worker>.arrow       a G(θ) worker's replay log: outputs per input, input order,
                              log_result values (executor/worker_file.py, store/replay_logs.py)
    inputs/<worker>.arrow     θ's input records, pickled (--record-inputs)
    lineage/<worker>.arrow    a worker's lineage links, outputs to inputs (--lineage;
                              executor/lineage.py, lineage/tables.py)
    lineage/derived/op<o>-p<p>.arrow
                              a map side's key links a trace derived: column
                              ``key_number``, its inputs' keys numbered (lineage/tables.py)
    lineage/derived/keys-op<o>-p<p>.arrow
                              the keys of a join's (or one of its inputs') records on a
                              partition, in position order: column ``key`` (lineage/join_keys.py)
    skew/<worker>.json        a key-partitioned worker's heavy-hitter sketch of its keys
                              (--skew; executor/skew.py, skew/load.py)
    samples/op<o>.parquet     a uniform sample of operator <o>'s input, one row per record
                              and its partition (--agent samples; agents/samples.py)
    summaries/op<o>.json      per field of operator <o>'s input: count, nulls, min/max,
                              mean, HLL and KLL sketches (--agent summaries; summaries/)
    interactions.jsonl        one line per interaction as it is requested
    interactions.json         the final list of interactions, with latencies
    snapshots.jsonl           one line per worker report: count, status, state delta
                              (coordinator/interactions.py, snapshots/history.py)
    actions.jsonl             the debugging session as Python calls (session/actions.py)
    control/breakpoints.jsonl breakpoints as armed, hit and removed (control/)
    control/hits.jsonl        breakpoint hits: operator, partition, record, state, decision
    control/edits.jsonl       records skipped (the quarantine) or replaced at hits, by
                              operator, partition and input index: replay applies them
    operators/op<o>.pkl       each operator as Spark took it, for replay
                              (store/operator_images.py)
    checkpoints/i<i>-p<p>-<key>.pkl
                              a worker's restorable state at interaction i (-1: when its
                              partition ended); <key> is op<o>-t<task> (checkpoints/file.py)
    checkpoints/plan.json     the checkpoint plan taken, with its measured costs
    replay/inputs/p<p>.pkl    θ's regenerated inputs, staged for the replay process
                              (store/staged_inputs.py)
    replay/inputs/side<op>-p<m>.pkl   the regenerated map side of join <op> after θ
    replay/inputs/links<op>.json      the rows each of θ's input batches gives DataFrame
                              operator <op> after θ, by partition, or why they cannot
                              be known (replay/row_links.py)
    replay/replay.log         what the replay processes print
    spark.log                 Spark's log lines about the run's failed tasks, kept out of
                              the cell while the run executes (session/spark_logs.py)
    stages.parquet            every task of the run's Spark stages as Spark's status store
                              had it when the run ended: stage, partition, status, records,
                              bytes, seconds (session/stage_loads.py; JVM stages' loads)

Beside the run directories, ``<root>/.results/<digest>.arrow`` holds the cells' action
results (collect, count, take, toPandas) as Arrow, content-addressed: equal results of
different runs are one file (versions/results.py).

``<worker>`` is ``op<operator>-p<partition>-s<stage>-a<attempt>-t<task>``: one task
attempt of one operator. Whole files are written under ``temp_path`` and renamed;
JSON-lines files are appended a line at a time.
"""
from __future__ import annotations

import os
import re
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import NamedTuple

DEFAULT_ROOT = os.path.join(".icedtea", "runs")

MANIFEST = "manifest.json"
STORE_TOKEN = ".store-token"
WORKERS = "workers"
LOCAL = "local"
ALERTS = "alerts.jsonl"
AGENT_TABLES = "agents"
LOGS = "logs"
INPUTS = "inputs"
LINEAGE = "lineage"
DERIVED = "derived"  # lineage/derived/: key links a trace derived
SKEW = "skew"
FRAME_JOIN_KEYS = "skew_joins"  # a DataFrame join's keys, counted by Spark on request
SAMPLES = "samples"
SUMMARIES = "summaries"
INTERACTIONS_LOG = "interactions.jsonl"
INTERACTIONS = "interactions.json"
SNAPSHOTS = "snapshots.jsonl"
ACTIONS = "actions.jsonl"
SPARK_LOG = "spark.log"
STAGE_TASKS = "stages.parquet"
CONTROL = "control"
OPERATORS = "operators"
CHECKPOINTS = "checkpoints"
PLAN = "plan.json"
EXPORTED_POINTS = ".interactions.json"  # beside an exported notebook (export/notebook.py)
REPLAY = "replay"
STAGED = os.path.join(REPLAY, INPUTS)
REPLAY_LOG = os.path.join(REPLAY, "replay.log")

RESULTS = ".results"

ARROW, PICKLE, LINES, JSON = ".arrow", ".pkl", ".jsonl", ".json"

_WORKER = re.compile(r"^op(-?\d+)-p(-?\d+)-s(-?\d+)-a(-?\d+)-t(-?\d+)$")
_CHECKPOINT = re.compile(r"^i(-?\d+)-p(\d+)-(.+)\.pkl$")


class WorkerName(NamedTuple):
    """The fields of a ``<worker>`` file name: one task attempt of one operator."""

    operator: int
    partition: int
    stage: int
    attempt: int
    task: int


class CheckpointName(NamedTuple):
    """The fields of a checkpoint file name."""

    # a field named ``index`` hides tuple.index, which Python allows and typeshed's
    # tuple does not foresee
    index: int  # type: ignore[assignment]
    partition: int
    key: str


# --- the run directory ------------------------------------------------------------------
def default_root(cwd: str | None = None) -> str:
    """Where runs go without ``--store``: ``.icedtea/runs`` under ``cwd`` (default: here)."""
    return os.path.join(cwd or os.getcwd(), DEFAULT_ROOT)


def run_dir(root: str, run_id: str) -> str:
    return os.path.join(root, run_id)


def run_dirs(root: str) -> list[str]:
    """The run directories under a store root (those with a manifest), by name."""
    return [os.path.join(root, entry) for entry in _listing(root)
            if not entry.startswith(".") and os.path.isfile(os.path.join(root, entry, MANIFEST))]


def result_path(root: str, digest: str) -> str:
    """A stored action result, named by the digest of its Arrow bytes."""
    if not re.fullmatch(r"[0-9a-f]{16,64}", digest):
        raise ValueError(f"not a result digest: {digest!r}")
    return os.path.join(root, RESULTS, digest + ARROW)


def result_digests(root: str) -> list[str]:
    """The digests of the results stored under a root."""
    return [entry[:-len(ARROW)] for entry in _listing(os.path.join(root, RESULTS))
            if entry.endswith(ARROW)]


def temp_path(path: str, delivery: int | None = None) -> str:
    """Where a whole file is written before it is renamed to ``path`` (per process and
    thread: two debuggers of one run may stage the same inputs at once; and per
    ``delivery``: an artifact a worker sends in frames)."""
    tag = "" if delivery is None else f"-a{delivery}"
    return f"{path}.{os.getpid()}-{threading.get_ident()}{tag}.tmp"


def with_parent(path: str) -> str:
    """``path``, once the folder that holds it exists."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    return path


@contextmanager
def whole_file(path: str) -> Iterator[str]:
    """Write ``path`` whole or not at all: yields a temp path to write to, renamed to
    ``path`` when the block ends; a block that raises (a full disk, say) leaves neither
    a half-written file nor its temp file."""
    tmp = temp_path(with_parent(path))
    try:
        yield tmp
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise


def exported_points_path(notebook: str) -> str:
    """Beside an exported notebook: its ``--interact-at`` points, when too long inline."""
    return os.path.splitext(notebook)[0] + EXPORTED_POINTS


def manifest_path(run: str) -> str:
    return os.path.join(run, MANIFEST)


def store_token_path(run: str) -> str:
    """The token a worker reads to learn that it shares the run store."""
    return os.path.join(run, STORE_TOKEN)


def alerts_path(run: str) -> str:
    return os.path.join(run, ALERTS)


def agent_table_path(run: str, table: str) -> str:
    """An agent's table ``table`` (a plain name: letters, digits, ``_``, ``-``)."""
    if not re.fullmatch(r"[A-Za-z0-9_-]+", table):
        raise ValueError(f"an agent's table name must be letters, digits, _ or -: {table!r}")
    return os.path.join(run, AGENT_TABLES, f"{table}.jsonl")


def interactions_log_path(run: str) -> str:
    return os.path.join(run, INTERACTIONS_LOG)


def interactions_path(run: str) -> str:
    return os.path.join(run, INTERACTIONS)


def snapshots_path(run: str) -> str:
    return os.path.join(run, SNAPSHOTS)


def actions_path(run: str) -> str:
    return os.path.join(run, ACTIONS)


def spark_log_path(run: str) -> str:
    return os.path.join(run, SPARK_LOG)


def stage_tasks_path(run: str) -> str:
    return os.path.join(run, STAGE_TASKS)


def control_path(run: str, name: str) -> str:
    """``control/<name>.jsonl``: ``breakpoints``, ``hits`` or ``edits`` (control/)."""
    return os.path.join(run, CONTROL, f"{name}.jsonl")


# --- one file per task attempt: workers/, local/, logs/, inputs/, lineage/ -------------
def worker_name(worker: Mapping) -> str:
    """``op<o>-p<p>-s<s>-a<a>-t<t>`` of a worker dict (operator, partition, stage, ...)."""
    return "op{operator}-p{partition}-s{stage}-a{attempt}-t{task}".format(**worker)


def parse_worker_name(name: str) -> WorkerName | None:
    """The fields of a ``<worker>`` file name (with or without its suffix); None if it is
    not one."""
    match = _WORKER.match(name.split(".", 1)[0])
    return WorkerName(*map(int, match.groups())) if match else None


def workers_dir(run: str) -> str:
    return os.path.join(run, WORKERS)


def worker_path(run: str, worker: Mapping) -> str:
    return os.path.join(run, WORKERS, worker_name(worker) + ARROW)


def local_events_path(run: str, worker: Mapping) -> str:
    return os.path.join(run, LOCAL, worker_name(worker) + LINES)


def replay_log_path(run: str, worker: Mapping) -> str:
    return os.path.join(run, LOGS, worker_name(worker) + ARROW)


def recorded_inputs_path(run: str, worker: Mapping) -> str:
    return os.path.join(run, INPUTS, worker_name(worker) + ARROW)


def lineage_path(run: str, worker: Mapping) -> str:
    return os.path.join(run, LINEAGE, worker_name(worker) + ARROW)


def lineage_files(run: str) -> Iterator[tuple[WorkerName, str]]:
    """Every worker's lineage file, with the task attempt it belongs to."""
    return _named(os.path.join(run, LINEAGE))


def derived_key_links_path(run: str, operator: int, partition: int) -> str:
    """A map side's key links on ``partition``, derived by a trace (``lineage/tables.py``):
    its inputs' key numbers, kept for later traces and reopened runs."""
    return os.path.join(run, LINEAGE, DERIVED, f"op{operator}-p{partition}{ARROW}")


def derived_keys_path(run: str, operator: int, partition: int) -> str:
    """The keys of ``operator``'s records on ``partition`` (a join or a join's input),
    fetched by a trace through the join (``lineage/join_keys.py``), kept for later ones."""
    return os.path.join(run, LINEAGE, DERIVED, f"keys-op{operator}-p{partition}{ARROW}")


def derived_keys_files(run: str, operator: int) -> list[str]:
    """The kept key files of ``operator``, any partition."""
    folder = os.path.join(run, LINEAGE, DERIVED)
    prefix = f"keys-op{operator}-p"
    try:
        return sorted(os.path.join(folder, name) for name in os.listdir(folder)
                      if name.startswith(prefix) and name.endswith(ARROW))
    except FileNotFoundError:
        return []


def skew_path(run: str, worker: Mapping) -> str:
    return os.path.join(run, SKEW, worker_name(worker) + JSON)


def frame_join_keys_path(run: str, operator: int) -> str:
    """A DataFrame join's records per shuffle partition and heavy keys, counted by Spark
    (``session/frame_join_keys.py``)."""
    return os.path.join(run, FRAME_JOIN_KEYS, f"join{operator}{JSON}")


def skew_files(run: str) -> Iterator[tuple[WorkerName, str]]:
    """Every worker's skew sketch, with the task attempt it belongs to."""
    return _named(os.path.join(run, SKEW), JSON)


def worker_files(run: str) -> list[str]:
    """Every worker file, sorted."""
    return _files(os.path.join(run, WORKERS), ARROW)


def local_event_files(run: str) -> list[str]:
    """Every file of local events, sorted."""
    return _files(os.path.join(run, LOCAL), LINES)


def replay_logs(run: str) -> Iterator[tuple[WorkerName, str]]:
    """Every replay log, with the task attempt it belongs to."""
    return _named(os.path.join(run, LOGS))


def recorded_inputs(run: str, operator: int, partition: int) -> Iterator[tuple[WorkerName, str]]:
    """The files of ``operator``'s recorded inputs on ``partition``, one per task attempt,
    sorted by name."""
    return ((name, path) for name, path in _named(os.path.join(run, INPUTS))
            if name.operator == operator and name.partition == partition)


# --- samples/, summaries/ (one file per operator, written by the coordinator) -----------
def sample_path(run: str, op_id: int) -> str:
    return os.path.join(run, SAMPLES, f"op{op_id}.parquet")


def summary_path(run: str, op_id: int) -> str:
    return os.path.join(run, SUMMARIES, f"op{op_id}{JSON}")


# --- operators/, checkpoints/, replay/ -------------------------------------------------
def operator_image_path(run: str, op_id: int) -> str:
    return os.path.join(run, OPERATORS, f"op{op_id}{PICKLE}")


def checkpoint_key(op_id: int, task: int) -> str:
    """How a checkpoint names its worker: the operator and its Spark task (θ on two paths
    runs in two tasks on one partition; names of operators can change)."""
    return f"op{op_id}-t{task}"


def checkpoints_dir(run: str) -> str:
    return os.path.join(run, CHECKPOINTS)


def checkpoint_path(run: str, index: int, partition: int, key: str) -> str:
    return os.path.join(run, CHECKPOINTS, f"i{index}-p{partition}-{key}{PICKLE}")


def checkpoints(run: str) -> Iterator[tuple[CheckpointName, str]]:
    """Every checkpoint file, with its interaction, partition and worker key."""
    directory = os.path.join(run, CHECKPOINTS)
    for entry in _listing(directory):
        match = _CHECKPOINT.match(entry)
        if match:
            index, partition, key = match.groups()
            yield CheckpointName(int(index), int(partition), key), os.path.join(directory, entry)


def checkpoint_plan_path(run: str) -> str:
    return os.path.join(run, CHECKPOINTS, PLAN)


def staged_inputs_path(run: str, partition: int, side: int | None = None) -> str:
    """θ's inputs on ``partition``, or (``side``: a join's node id) the combiners of that
    join's map side on union partition ``partition``."""
    name = f"p{partition}" if side is None else f"side{side}-p{partition}"
    return os.path.join(run, STAGED, f"{name}{PICKLE}")


def staged_links_path(run: str, operator: int) -> str:
    """The rows each of θ's input batches gives DataFrame operator ``operator`` after θ,
    by partition (``replay/row_links.py``), or why they cannot be known."""
    return os.path.join(run, STAGED, f"links{operator}{JSON}")


def replay_log_file(run: str) -> str:
    """What the run's replay processes print."""
    return os.path.join(run, REPLAY_LOG)


# --- artifacts a worker sends over the control channel (coordinator/artifacts.py) -------
ARTIFACT_KINDS = ("lineage", "derived_keys", "skew", "inputs", "checkpoint")
_WHERE = {"derived_keys": ("operator", "partition"),
          "checkpoint": ("operator", "partition", "stage", "attempt", "task", "index")}


def artifact_path(run: str, kind: str, where: Mapping) -> str:
    """Where an artifact of ``kind`` goes: ``where`` is its worker's fields (a derived
    key file: operator and partition; a checkpoint: its worker's and ``index``), integers
    only, so no name a peer sends can lead outside the run directory."""
    names = _WHERE.get(kind, ("operator", "partition", "stage", "attempt", "task"))
    if kind not in ARTIFACT_KINDS:
        raise ValueError(f"not an artifact kind: {kind!r}")
    if any(type(where.get(name)) is not int for name in names):
        raise ValueError(f"a {kind} artifact needs the integers {', '.join(names)}")
    if kind == "derived_keys":
        return derived_keys_path(run, where["operator"], where["partition"])
    if kind == "checkpoint":
        return checkpoint_path(run, where["index"], where["partition"],
                               checkpoint_key(where["operator"], where["task"]))
    return {"lineage": lineage_path, "skew": skew_path,
            "inputs": recorded_inputs_path}[kind](run, where)


# --- listing ---------------------------------------------------------------------------
def _listing(directory: str) -> list[str]:
    try:
        return sorted(os.listdir(directory))
    except (FileNotFoundError, NotADirectoryError):
        return []


def _files(directory: str, suffix: str) -> list[str]:
    return [os.path.join(directory, entry) for entry in _listing(directory)
            if entry.endswith(suffix)]


def _named(directory: str, suffix: str = ARROW) -> Iterator[tuple[WorkerName, str]]:
    for path in _files(directory, suffix):
        name = parse_worker_name(os.path.basename(path))
        if name is not None:
            yield name, path


def file_stats(run_path: str, skip: frozenset[str] = frozenset()) -> Iterator[os.stat_result]:
    """The ``lstat`` of every file under a run directory (names in ``skip`` left out);
    files that vanish while walked are passed over."""
    for folder, _, files in os.walk(run_path):
        for name in files:
            if name not in skip:
                try:
                    yield os.lstat(os.path.join(folder, name))
                except OSError:
                    pass
