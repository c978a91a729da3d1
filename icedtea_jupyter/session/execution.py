"""Starting a run: a store, a coordinator, and the cell's code in a background thread.

The kernel stays free while the job runs (comm and widget messages are handled only
between cells), so the panel's buttons and the sidebar work during the run.
"""
from __future__ import annotations

import time
import traceback
from dataclasses import asdict, dataclass, field
from typing import Any

from ..agents.coverage import operator_api, skipped_operators
from ..agents.flags import flag_agents
from ..agents.progress import ProgressAgent
from ..agents.skew import SkewCoordinator
from ..coordinator.coordinator import Coordinator
from ..dag import Dag
from ..executor.agent import Agent
from ..executor.skew import AGENT
from ..instrument import recording
from ..instrument.connect import NeedsClassicSession
from ..instrument.recorder import InterestingNotFound
from ..instrument.sql import observe_registrations
from ..lineage.frames_ahead import stop_writing_ahead
from ..snapshots.pinned import parse_interact_at
from ..store import layout
from ..store.missing import missing_lineage, missing_skew
from ..store.run_store import RunStore, new_run_id
from ..versions import catalog
from ..versions.fingerprint import digest
from ..versions.tracker import VersionTracker
from . import registry
from .connect import NO_OPERATOR_WARNING, connect_notes, is_connect, workers_cannot_import
from .interpreter import point_workers_here
from .interrupted import kernel_identity
from .live_run import LiveRun
from .run import Listener, Run
from .spark_attempts import killed_attempts, killed_warning, succeeded
from .spark_logs import task_failures_logged_to
from .stage_loads import keep_stage_tasks

REFUSALS = (InterestingNotFound, NeedsClassicSession)  # the cell's use refused, before any task
NO_JOB_WARNING = ("The cell ran no Spark job, so nothing was recorded: add an action such as "
                  "collect(), count() or a write.")


class RunFailed(Exception):
    """Raised by ``%%icedtea --wait`` for a failed run: which operator, partition, record."""

    def _render_traceback_(self) -> list[str]:
        """What IPython shows: this one line and where the rest is, not the chain of
        exceptions behind it (PySpark's carries the JVM's stack)."""
        return [f"RunFailed: {self}",
                "(the operator's traceback: icedtea_jupyter.last_run().error['traceback'])"]


def failure_message(run: Run) -> str:
    error = run.error or {}
    if not error.get("operator"):
        return f"icedtea run {run.id} failed: {error.get('message', 'unknown error')}"
    record = (error.get("record") or {}).get("repr")
    culprit = f"; culprit record: {record}" if record else ""
    return (f"icedtea run {run.id} failed: operator {error['operator']!r} on partition "
            f"{error.get('partition')} raised {error.get('exception')}: "
            f"{error.get('message')}{culprit}")


@dataclass
class RunOptions:
    """Options of one run (the ``%%icedtea`` flags)."""

    store: str | None = None
    wait: bool = False
    bind: str | None = None
    advertise: str | None = None
    advertise_port: int | None = None
    agents: list[type[Agent]] = field(default_factory=list)
    interesting: str | None = None
    interact_every: float | None = None
    interact_when: str | None = None
    interact_at: str | None = None  # "0:1000 1:end, 0:2000", or a JSON file (pinned.py)
    record_inputs: bool = False
    lineage: bool = False  # capture record-level lineage (run.trace_back/trace_forward)
    skew: bool = False  # count heavy keys of key-partitioned operators (run.skew)
    checkpoint: str = "none"  # none | all | online | offline: checkpoints for fast jumps
    tau: float = 1.0  # the bound on a jump's time, in seconds (fork checkpoints, plans)
    replay_memory: float | None = None  # MB for parked forks (default: min(2 GiB, RAM/4))
    prepare: bool = True  # place fork checkpoints in the background when the run ends
    splits: dict = field(default_factory=dict)  # s.mitigate(): map side -> (keys, salts)
    reuse: bool = False  # answer actions from an equivalent earlier run's stored result
    cell_id: str | None = None  # the notebook cell (versions); default: a hash of its text
    break_when: list[str] = field(default_factory=list)  # "operator: expression over row"
    on_error: str = "fail"  # "pause": an operator's exception pauses the job (a hit)
    trial: float | None = None  # this run is a trial on this share of each source
    trial_continue: bool = False  # --trial: the full run starts even if the trial raised
    tolerate: int | None = None  # quarantine up to N records that raise (run.quarantine())
    checks: list[str] = field(default_factory=list)  # "operator: predicate over row"
    table_checks: list[str] = field(default_factory=list)  # "operator: unique(id)", ...
    golden: list[str] = field(default_factory=list)  # "operator: reference_function"
    golden_sample: float | None = None  # records (partitions) golden tests; None: budget
    latency_factor: float | None = None  # the latency agent, alerting at F × the average

    def manifest(self) -> dict:
        data = asdict(self)
        data["agents"] = [getattr(a, "__name__", str(a)) for a in self.agents]
        data["golden"] = list(self.golden)
        data["splits"] = {str(node): {"keys": [repr(k) for k in keys], "salts": salts}
                          for node, (keys, salts) in self.splits.items()}
        return data


def cell_key(code: str, cell_id: str | None) -> str:
    """A cell's identity for its versions: JupyterLab's cell id, else its text's hash."""
    return f"id:{cell_id}" if cell_id else "text:" + digest(code.strip())[:16]


def _spark_settings() -> dict | None:
    """What the exported notebook's Spark session is built from."""
    sc = _spark_context()
    if sc is None:
        return None
    return {"master": sc.master, "app": sc.appName}


def _spark_context() -> Any:
    """The kernel's SparkContext; none on Spark Connect (the server has it)."""
    from pyspark import SparkContext

    return None if is_connect() else SparkContext._active_spark_context


def _bind_address(options: RunOptions) -> str:
    if options.bind:
        return options.bind
    sc = _spark_context()
    if sc is not None and not sc.master.startswith("local"):
        host = sc.getConf().get("spark.driver.host", "127.0.0.1")
        return host or "127.0.0.1"
    return "127.0.0.1"


def parse_break_when(text: str) -> tuple[str, str]:
    """``"operator: expression over row"`` -> (operator, expression); ValueError if it
    is not that."""
    operator, colon, expression = text.partition(":")
    if not colon or not operator.strip() or not expression.strip():
        raise ValueError(f"--break-when {text!r}: write it as \"operator: expression over "
                         "row\", e.g. \"detect: row.amount > 10_000\"")
    try:
        compile(expression.strip(), "--break-when", "eval")
    except SyntaxError as exc:
        raise ValueError(f"--break-when {text!r}: {expression.strip()!r} is not a Python "
                         f"expression: {exc.msg}") from None
    return operator.strip(), expression.strip()


def start_run(code: str, namespace: dict, options: RunOptions,
              context: dict | None = None) -> LiveRun:
    """Record ``code`` as a new run; returns at once (use ``run.wait()``). ``context``
    (from the magic): its ``line`` and the kernel's ``history`` before the cell, which
    the exported notebook re-executes."""
    compiled = compile(code, "<icedtea cell>", "exec")  # a SyntaxError loses nothing
    for text in options.break_when:  # refused before anything is recorded
        parse_break_when(text)
    tools = flag_agents(options, namespace)  # --tolerate, --check...: refused before a run
    if options.on_error not in ("fail", "pause"):
        raise ValueError(f"on_error must be 'fail' or 'pause', not {options.on_error!r}")
    pins = parse_interact_at(options.interact_at) if options.interact_at else ()
    connect = is_connect()
    notes = (connect_notes(options.lineage, options.bind, options.reuse) if connect
             else point_workers_here(_spark_context()))  # or refused, before any job
    stop_writing_ahead()  # an earlier run's lineage frames: never ahead of this run's jobs
    observe_registrations()  # a function the cell registers for SQL is hosted when called
    root = options.store or layout.default_root()
    run_id = new_run_id()
    store = RunStore.create(root, run_id)
    manifest = {"id": run_id, "status": "running", "started": time.time(), "cell": code,
                "options": options.manifest(), "dag": {}, "warnings": [], "error": None,
                "session": "connect" if connect else "classic",
                "kernel": kernel_identity(),  # a run its kernel never ended: interrupted.py
                "version": catalog.assign(root, cell_key(code, options.cell_id)),
                "results": [], "reused_from": None, "notes": [],
                "spark": _spark_settings(), **(context or {})}
    store.write_manifest(manifest)
    dag = Dag()

    def coordinator(emit: Listener) -> Coordinator:
        return Coordinator(run_id, store, dag, [ProgressAgent, *options.agents, *tools], emit,
                           bind=_bind_address(options), advertise=options.advertise,
                           advertise_port=options.advertise_port,
                           interact_every=options.interact_every,
                           condition=options.interact_when,
                           checkpoint=options.checkpoint, tau=options.tau,
                           record_inputs=options.record_inputs, lineage=options.lineage,
                           skew=options.skew,
                           breakpoints=tuple(parse_break_when(b) for b in options.break_when),
                           on_error=options.on_error,
                           interact_at=pins)

    run = LiveRun(store, manifest, dag, coordinator, options.interesting)
    run.recorder.cell = code
    run.recorder.splits = dict(options.splits)
    run.recorder.trial = options.trial
    run.namespace = namespace
    if options.skew:
        run.coordinator.agents[AGENT] = SkewCoordinator()
    run.tracker = VersionTracker(root, run_id, run.recorder, options.reuse)
    run.recorder.on_action = run.tracker.on_action
    run.recorder.on_g_grew = run.coordinator.announce_g
    run.coordinator.start_agents(run)
    run.warnings.extend(notes)
    registry.add(run)
    registry.close_replaced(run)  # the cell's earlier runs: their replay processes end
    run.start(lambda: _execute(run, compiled, namespace))
    run.emit("run", {"status": "running"})
    return run


def _execute(run: LiveRun, compiled: Any, namespace: dict) -> None:
    sc = _spark_context()
    cell_error: BaseException | None = None
    try:
        with recording(run.recorder), \
                task_failures_logged_to(sc, layout.spark_log_path(run.path)):
            if sc is not None:
                sc.setJobGroup(run.id, f"icedtea run {run.id}", interruptOnCancel=True)
            exec(compiled, namespace)
    except BaseException as exc:  # the cell's own error: recorded, shown, re-raised by --wait
        cell_error = exc
    finally:
        run.recorder.close()
        _conclude(run, sc, cell_error)


def _conclude(run: LiveRun, sc_before: Any, cell_error: BaseException | None) -> None:
    run.cell_exception = cell_error
    coordinator = run.coordinator
    try:
        coordinator.finish(succeeded=lambda keys: succeeded(_spark_context(), keys))
        killed = killed_attempts(_spark_context(), coordinator.worker_states())
        coordinator.discard(killed)
        run.manifest["killed_attempts"] = killed
        run.manifest["hosts"] = dict(coordinator.server.hosts)  # their store checks
        run.manifest["unkept_udfs"] = run.recorder.unkept_udfs()  # replay/stages.py
        jobs = _jobs(run, sc_before)
        run.manifest["jobs"] = jobs
        keep_stage_tasks(run, _spark_context(), jobs)
        _versions(run)
        warnings = _warnings(run, jobs)
        error = coordinator.first_error
        if cell_error is not None:
            error = _cell_error(cell_error, error, bool(jobs) or bool(coordinator.workers))
        if cell_error is None and run.options.get("checkpoint", "none") != "none" \
                and not run.store.full:
            warnings.extend(_take_checkpoints(run))
        _joined_keys_only(run, warnings)
        if coordinator.control.stopped:  # run.stop(): the cancelled job is no failure
            run.end("stopped", None, warnings)
        else:
            run.end("failed" if cell_error is not None else "finished", error, warnings)
        _prepare_time_travel(run)
        _prepare_lineage(run)
    except Exception as exc:  # never leave a run "running" forever
        run.end("failed", {"operator": None, "exception": type(exc).__name__,
                           "message": f"icedtea failed to conclude the run: {exc}",
                           "traceback": traceback.format_exc()}, [])


def _joined_keys_only(run: LiveRun, warnings: list[str]) -> None:
    """--lineage: the join inputs' captured keys kept for the keys the joins output."""
    if not run.options.get("lineage"):
        return
    from ..lineage.join_keys import keep_joined_keys
    from ..lineage.tables import chosen_files

    try:
        keep_joined_keys(run.path, run.dag, chosen_files(run.store))
    except Exception as exc:  # the keys are kept whole: traces read them as they are
        warnings.append(f"lineage: a join's keys kept whole: {type(exc).__name__}: {exc}")


def _versions(run: LiveRun) -> None:
    """The versions' part of the manifest: fingerprints, results, reuse."""
    tracker = run.tracker
    try:
        run.manifest.update(tracker.manifest())
    except Exception as exc:  # the run is recorded either way; it just has no prints
        tracker.notes.append(f"no fingerprints: {type(exc).__name__}: {exc}")
        run.manifest.update(results=tracker.results, reused_from=tracker.reused_from)
    run.manifest["notes"] = list(tracker.notes)


def _prepare_time_travel(run: LiveRun) -> None:
    """Start the run's replay process, which places fork checkpoints in the background,
    when the run has interactions to jump to (``run.debugger().prepare()`` waits)."""
    from ..replay.remote import fork_available

    try:
        if run.status == "finished" and run.options.get("prepare", True) and \
                not run.store.full and \
                fork_available() and len(run.history().raw) > 1:  # records, not views
            run.debugger()
    except Exception as exc:  # the run is recorded either way; jumps start it again
        run.warnings.append(f"time travel could not be prepared: {type(exc).__name__}: {exc}")


def _prepare_lineage(run: LiveRun) -> None:
    """Start writing a DataFrame run's lineage frames in the background
    (``lineage/frames_ahead.py``)."""
    try:
        if run.status == "finished" and run.options.get("prepare", True) and \
                run.options.get("lineage"):
            run.prepare_lineage()
    except LookupError:  # an operator not traced: the run's traces say which
        pass
    except Exception as exc:  # the run is recorded either way; the first trace writes them
        run.warnings.append(f"lineage frames could not be written ahead: "
                            f"{type(exc).__name__}: {exc}")


def _take_checkpoints(run: LiveRun) -> list[str]:
    """The checkpointing phase of --checkpoint: replay the logs, plan, write checkpoints."""
    from ..checkpoints.file import CheckpointStore
    from ..checkpoints.policy import DURING_RUN, summarise_run
    from ..replay.debugger import Debugger
    from ..replay.inputs import ReplayInputs
    from ..replay.logs import RunLogs

    options = run.options
    if options["checkpoint"] in DURING_RUN:  # the workers took them during the run
        interactions, _ = run.coordinator.book.copies()
        run.manifest["checkpoints"] = summarise_run(run.path, options["checkpoint"],
                                                    options["tau"], interactions)
        return []
    try:
        logs = RunLogs(run)
        debugger = Debugger(logs, ReplayInputs(run, logs), CheckpointStore(run.path))
        try:
            summary = debugger.take_checkpoints(options["checkpoint"], options["tau"])
        finally:
            debugger.close()
    except Exception as exc:  # the run is recorded either way; jumps replay from I0
        return [f"no checkpoints taken ({options['checkpoint']} plan): "
                f"{type(exc).__name__}: {exc}"]
    run.manifest["checkpoints"] = {k: v for k, v in summary.items() if k != "costs"}
    return []


def _cell_error(exc: BaseException, operator_error: dict | None, ran_jobs: bool) -> dict:
    if operator_error is not None:
        return operator_error
    if isinstance(exc, REFUSALS):  # refused before the job: the reason is all
        return {"operator": None, "partition": None, "record": None,
                "exception": type(exc).__name__, "message": str(exc), "traceback": None}
    where = "" if ran_jobs else " before any Spark job"
    message = workers_cannot_import(exc) or f"the cell raised{where}: {type(exc).__name__}: {exc}"
    return {"operator": None, "partition": None, "record": None,
            "exception": type(exc).__name__, "message": message,
            "traceback": "".join(traceback.format_exception(exc))}


def _jobs(run: Run, sc_before: Any) -> list[dict]:
    sc = _spark_context()
    if sc is None:
        return []
    tracker = sc.statusTracker()
    group = run.id if sc_before is sc else None
    jobs = []
    for job_id in sorted(tracker.getJobIdsForGroup(group)):
        info = tracker.getJobInfo(job_id)
        if info is None:
            continue
        stages = []
        for stage_id in info.stageIds:
            stage = tracker.getStageInfo(stage_id)
            if stage is not None:
                stages.append({"id": stage_id, "name": stage.name, "tasks": stage.numTasks,
                               "completed": stage.numCompletedTasks,
                               "failed": stage.numFailedTasks})
        jobs.append({"id": job_id, "status": str(info.status), "stages": stages})
    return jobs


def _warnings(run: LiveRun, jobs: list[dict]) -> list[str]:
    coordinator = run.coordinator
    warnings = list(run.warnings)
    if run.store.full.warning:
        warnings.insert(0, run.store.full.warning)
    refused = isinstance(run.cell_exception, REFUSALS)  # its error says why
    answered = bool(run.manifest.get("reused_from"))  # no job: a stored result answered
    if not jobs and not coordinator.workers and not refused and not answered:
        connect = run.manifest.get("session") == "connect"
        warnings.append(NO_OPERATOR_WARNING if connect else NO_JOB_WARNING)
    warnings.extend(w for w in run.recorder.warnings() if w not in warnings)
    wanted = run.recorder.interesting
    if wanted and (run.dag.interesting is None or run.dag.interesting.name != wanted) \
            and not refused:
        names = ", ".join(n.name for n in run.dag.python_operators) or "none"
        warnings.append(f"--interesting {wanted!r}: no Python operator has that name "
                        f"(Python operators: {names})")
    operators = set(run.dag.names().values())
    for bp in coordinator.control.breakpoints.values():
        if bp.operator not in operators:
            warnings.append(f"--break-when {bp.operator!r}: no Python operator has that name; "
                            "the breakpoint was never armed")
    for reason in coordinator.local_reasons:
        warnings.append(f"Some workers recorded locally because they could not reach the "
                        f"coordinator: {reason}")
    warnings.extend(_lost_attempts(run))
    for missing in (missing_lineage(run.store, run.manifest, run.dag),
                    missing_skew(run.store, run.manifest, run.dag)):
        if missing:  # what could not arrive from executors on other hosts
            warnings.append(missing)
    udfs = {node: call[0] for node, call in run.recorder.udf_calls.items()}
    warnings.extend(skipped_operators(
        dict.fromkeys(cls.agent_name() for cls in coordinator.run_spec.agents),
        [(n.name, operator_api(n.api, udfs.get(n.id))) for n in run.dag.python_operators]))
    warnings.extend(killed_warning(run.manifest.get("killed_attempts", []), run.dag.names()))
    rejected = coordinator.server.rejections
    if rejected:
        warnings.append(f"{len(rejected)} control connection(s) or message(s) were rejected: "
                        + "; ".join(rejected[:3]))
    return warnings


def _lost_attempts(run: LiveRun) -> list[str]:
    """One warning per operator whose task attempts were lost with their Python worker
    (an executor died, or Spark killed the task) and that Spark ran again."""
    states = [state for _, state in run.coordinator.worker_states()]
    ok = {(s["operator"], s["stage"], s["partition"]) for s in states if s["status"] == "ok"}
    lost: dict[int, list[dict]] = {}
    for s in states:
        if s["status"] == "lost":
            lost.setdefault(s["operator"], []).append(s)
    warnings = []
    for operator, attempts in lost.items():
        parts = sorted({a["partition"] for a in attempts})
        redone = all((a["operator"], a["stage"], a["partition"]) in ok for a in attempts)
        warnings.append(
            f"{len(attempts)} task attempt(s) of {run.dag.names().get(operator, operator)!r} "
            f"(partition(s) {', '.join(map(str, parts))}) were lost with their Python worker: "
            "an executor died, or Spark killed the task. "
            + ("Spark ran them again; the run counts each partition once, from the attempt "
               "that succeeded." if redone else "Not every one of them was run again."))
    return warnings
