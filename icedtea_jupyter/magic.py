"""``%%icedtea`` (record a cell) and ``%icedtea`` (runs, open, export)."""
from __future__ import annotations

import argparse
import difflib
import importlib
import logging
import os
import shlex
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

from IPython.core.error import UsageError
from IPython.core.magic import Magics, line_cell_magic, magics_class

from . import cell_outcomes
from .agents.flags import flag_agents
from .session import registry
from .session.execution import (
    REFUSALS,
    RunFailed,
    RunOptions,
    failure_message,
    parse_break_when,
    start_run,
)
from .session.interpreter import WorkersCannotImport, point_workers_here
from .session.trial import TrialFailed, parse_fraction, trial_then_full
from .snapshots.pinned import parse_interact_at
from .store.run_store import StoreError

LOG = logging.getLogger("icedtea_jupyter")


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # argparse would exit the kernel
        raise UsageError(f"%%icedtea: {message}\n{self.format_usage()}")

    def parse_args(self, args: Sequence[str] | None = None,  # type: ignore[override]
                   namespace: None = None) -> argparse.Namespace:
        """argparse's, with a "did you mean" for a misspelt flag (``--linage``)."""
        known, unknown = self.parse_known_args(args, namespace)
        if unknown:
            self.error(f"unrecognized arguments: {' '.join(unknown)}{self._did_you_mean(unknown)}")
        return known

    def _did_you_mean(self, words: list[str]) -> str:
        flags = [flag for action in self._actions for flag in action.option_strings]
        hints = [close[0] for word in words if word.startswith("--")
                 for close in [difflib.get_close_matches(word.split("=", 1)[0], flags, 1)]
                 if close]
        return f" (did you mean {' or '.join(dict.fromkeys(hints))}?)" if hints else ""


def _parser() -> _Parser:
    parser = _Parser(prog="%%icedtea", add_help=False,
                     description="Record the PySpark pipeline of this cell.")
    parser.add_argument("--wait", action="store_true",
                        help="block until the run ends (scripts, nbval); re-raise the cell's error")
    parser.add_argument("--store", metavar="DIR",
                        help="root of the run store (default: .icedtea/runs beside the notebook)")
    parser.add_argument("--bind", metavar="ADDRESS",
                        help="address the coordinator listens on (default: loopback, or the "
                             "driver's address when the master is not local)")
    parser.add_argument("--agent", action="append", default=[], metavar="NAME",
                        help="an agent to attach: a built-in agent's short name, an Agent "
                             "subclass in the notebook, or module.Class")
    parser.add_argument("--no-panel", action="store_true", help="do not show the run panel")
    parser.add_argument("--interesting", metavar="OPERATOR",
                        help="θ, the operator to debug (default: the first Python operator)")
    parser.add_argument("--interact-every", type=_positive, metavar="SECONDS",
                        help="a periodic interaction every SECONDS while θ runs")
    parser.add_argument("--interact-when", metavar="EXPR",
                        help="an interaction after each input record of θ for which the "
                             "Python expression over `row` is true, e.g. \"row.amount > 1000\"")
    parser.add_argument("--interact-at", metavar="POINTS",
                        help="interactions at θ's given per-partition counts, interaction k "
                             "the k-th point: \"0:1000 1:500, 0:2000 1:end\" (PARTITION:"
                             "RECORDS processed, or end), or a JSON file of them (what an "
                             "exported notebook passes, so its jumps show the same states)")
    parser.add_argument("--record-inputs", action="store_true",
                        help="keep θ's input records in the run store")
    parser.add_argument("--lineage", action="store_true",
                        help="capture record-level lineage: run.trace_back(row), "
                             "run.trace_forward(record)")
    parser.add_argument("--skew", action="store_true",
                        help="count the heavy keys of key-partitioned operators: "
                             "run.skew(operator)")
    parser.add_argument("--checkpoint", choices=("none", "all", "online", "offline"),
                        default="none", help="checkpoint plan for fast jumps (default none)")
    parser.add_argument("--tau", type=_positive, default=1.0, metavar="SECONDS",
                        help="the longest a jump may take (default 1): the fork checkpoints "
                             "placed after the run, and the online/offline plans")
    parser.add_argument("--replay-memory", type=_positive, default=None, metavar="MB",
                        help="memory for parked fork checkpoints (default: the smaller of "
                             "2 GiB and a quarter of the machine's memory)")
    parser.add_argument("--no-prepare", dest="prepare", action="store_false",
                        help="do not place fork checkpoints nor write a DataFrame run's "
                             "lineage frames when the run ends (the first run.debugger() "
                             "call, the first trace, does)")
    parser.add_argument("--reuse", action="store_true",
                        help="answer the cell's actions from an earlier run whose pipeline is "
                             "equivalent (same operators and sources), without running Spark")
    parser.add_argument("--cell", metavar="ID",
                        help="the cell's identity for its versions (default: JupyterLab's "
                             "cell id, else a hash of the cell's text)")
    parser.add_argument("--break-when", action="append", default=[], metavar="'OP: EXPR'",
                        help="pause the job when operator OP is about to take a record for "
                             "which the Python expression over `row` is true "
                             "(repeatable), e.g. \"detect: row.amount > 10_000\"")
    parser.add_argument("--on-error", choices=("fail", "pause"), default="fail",
                        help="pause: an operator that raises pauses the job; skip the record, "
                             "replace it or stop (default fail: the task fails); on a UDF "
                             "column skip makes the row's value null")
    parser.add_argument("--trial", metavar="SHARE",
                        help="first run the pipeline on SHARE of each source (1%% or 0.01) "
                             "with the same agents, report its alerts and summaries, then "
                             "the full run; not if the trial raised")
    parser.add_argument("--trial-continue", action="store_true",
                        help="with --trial: start the full run even if the trial raised")
    _agent_flags(parser)
    return parser


def _agent_flags(parser: argparse.ArgumentParser) -> None:
    """The flags of the built-in agents' tools (agents/flags.py)."""
    parser.add_argument("--tolerate", type=int, default=None, metavar="N",
                        help="quarantine up to N records that make a per-record operator "
                             "raise (record, exception, state: run.quarantine()); the job "
                             "goes on; one more fails it (a UDF column's row: its value "
                             "null)")
    parser.add_argument("--check", action="append", default=[], metavar="'OP: EXPR'",
                        help="row integrity: an alert for each output record of OP for "
                             "which the Python expression over `row` is false "
                             "(repeatable), e.g. \"detect: row.amount >= 0\"")
    parser.add_argument("--check-table", action="append", default=[], metavar="'OP: CHECK'",
                        help="table integrity over OP's whole output (repeatable): "
                             "unique(F), not_null(F), monotone(F), count between A and B, "
                             "sum(F) between A and B")
    parser.add_argument("--golden", action="append", default=[], metavar="'OP: FUNCTION'",
                        help="run the notebook's reference FUNCTION beside OP; each "
                             "difference is an alert (repeatable)")
    parser.add_argument("--golden-sample", type=float, default=None, metavar="FRACTION",
                        help="the fraction of records (partitions, for mapPartitions) "
                             "--golden tests; 1: every record (default: every record "
                             "while golden costs at most 20%% of the operator's time)")
    parser.add_argument("--latency-factor", type=float, default=None, metavar="F",
                        help="the latency agent, alerting on a record that takes more "
                             "than F times its operator's average (--agent latency: F=10)")


def parse_options(line: str, namespace: dict) -> tuple[RunOptions, bool]:
    """Parse the magic's flags; raises UsageError with the usage for anything unknown."""
    try:
        words = shlex.split(line)
    except ValueError as exc:
        raise UsageError(f"%%icedtea: cannot parse the options: {exc}") from None
    args = _parser().parse_args(words)
    agents = [_resolve_agent(name, namespace) for name in args.agent]
    if args.interact_when:
        try:
            compile(args.interact_when, "--interact-when", "eval")
        except SyntaxError as exc:
            raise UsageError(f"%%icedtea: --interact-when is not a Python expression: "
                             f"{exc.msg}") from None
    if args.interact_at is not None:
        try:
            parse_interact_at(args.interact_at)
        except ValueError as exc:
            raise UsageError(f"%%icedtea: {exc}") from None
    for text in args.break_when:
        try:
            parse_break_when(text)
        except ValueError as exc:
            raise UsageError(f"%%icedtea: {exc}") from None
    try:
        trial = parse_fraction(args.trial) if args.trial is not None else None
    except ValueError as exc:
        raise UsageError(f"%%icedtea: {exc}") from None
    options = RunOptions(store=args.store, wait=args.wait, bind=args.bind, agents=agents,
                         interesting=args.interesting, interact_every=args.interact_every,
                         interact_when=args.interact_when, interact_at=args.interact_at,
                         record_inputs=args.record_inputs,
                         lineage=args.lineage, skew=args.skew, checkpoint=args.checkpoint,
                         tau=args.tau, replay_memory=args.replay_memory, prepare=args.prepare,
                         reuse=args.reuse, cell_id=args.cell, break_when=args.break_when,
                         on_error=args.on_error, trial=trial,
                         trial_continue=args.trial_continue, tolerate=args.tolerate,
                         checks=args.check,
                         table_checks=args.check_table, golden=args.golden,
                         golden_sample=args.golden_sample,
                         latency_factor=args.latency_factor)
    try:
        flag_agents(options, namespace)
    except ValueError as exc:
        raise UsageError(f"%%icedtea: {exc}") from None
    return options, not args.no_panel


def _positive(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if value <= 0:
        raise argparse.ArgumentTypeError("must be more than 0 seconds")
    return value


def _resolve_agent(name: str, namespace: dict) -> type:
    from .agents.registry import built_in_agent, built_in_agents
    from .executor.agent import Agent

    target = namespace.get(name) or built_in_agent(name)
    if target is None and "." in name:
        module, _, attribute = name.rpartition(".")
        try:
            target = getattr(importlib.import_module(module), attribute, None)
        except ImportError as exc:
            raise UsageError(f"%%icedtea: cannot import agent {name!r}: {exc}") from None
    if not (isinstance(target, type) and issubclass(target, Agent)):
        names = ", ".join(sorted(built_in_agents())) or "none"
        raise UsageError(f"%%icedtea: --agent {name!r} is neither a built-in agent ({names}) "
                         f"nor an icedtea_jupyter.Agent subclass in the notebook or a module")
    return target


@magics_class
class IcedteaMagics(Magics):
    @line_cell_magic
    def icedtea(self, line: str, cell: str | None = None) -> Any:
        """Record a PySpark cell (``%%icedtea [options]``); ``%icedtea runs|open PATH``."""
        if cell is None:
            return self._line(line)
        namespace = self._namespace()
        options, show_panel = parse_options(line, namespace)
        if not cell.strip():
            raise UsageError("%%icedtea: the cell is empty: put PySpark code under the magic")
        options.cell_id = options.cell_id or self._cell_id()
        history, outcomes = self._history(line, cell)
        context = {"line": line, "history": history, "history_outcomes": outcomes}
        try:
            run = (trial_then_full(cell, namespace, options, context) if options.trial
                   else start_run(cell, namespace, options, context))
            cell_outcomes.note_run(self.shell, getattr(run, "id", None))
        except WorkersCannotImport as refused:  # before any job: the fix, in one line
            raise UsageError(f"%%icedtea: {refused}") from None
        except TrialFailed as refused:  # the trial raised: no full run
            raise UsageError(str(refused)) from None
        if show_panel:
            from .ui.panel import show_panel as show

            show(run)
        if options.wait:
            try:
                run.wait()
            except KeyboardInterrupt:  # the kernel's interrupt ends the job cleanly
                run.stop()
                run.wait(60)
                raise
            exc = run.cell_exception
            if isinstance(exc, REFUSALS):  # refused before any task: why
                raise UsageError(f"%%icedtea: {exc}") from None
            if exc is not None:
                if run.error and run.error.get("operator"):
                    raise RunFailed(failure_message(run)) from exc
                raise exc
        return None

    def _history(self, line: str, cell: str) -> tuple[list[str], list[dict | None]]:
        """The kernel's cells before this one (raw, as typed), for the export, and what
        became of each (``cell_outcomes``: raised, started a run)."""
        manager = getattr(self.shell, "history_manager", None)
        cells = list(getattr(manager, "input_hist_raw", None) or [])[1:]
        if cells and cells[-1].strip().endswith(cell.strip()) and "icedtea" in cells[-1]:
            cells = cells[:-1]  # this cell itself
        outcomes = cell_outcomes.outcomes(self.shell, len(cells))
        kept = [(c, o) for c, o in zip(cells, outcomes) if c.strip()]
        return [c for c, _ in kept], [o for _, o in kept]

    def _cell_id(self) -> str | None:
        """JupyterLab's id of the executing cell (its execute request's metadata), after
        the notebook's path where the server names it (``JPY_SESSION_NAME``): a copy of a
        notebook keeps its cells' ids, and its runs are not versions of the original's."""
        kernel = getattr(self.shell, "kernel", None)
        try:
            parent = kernel.get_parent() if kernel is not None else None
        except Exception:  # an older ipykernel: the text's hash identifies the cell
            return None
        cell_id = ((parent or {}).get("metadata") or {}).get("cellId")
        if not cell_id:
            return None
        notebook = os.environ.get("JPY_SESSION_NAME")
        return f"{notebook}#{cell_id}" if notebook else str(cell_id)

    def _namespace(self) -> dict:
        """The user's namespace: the shell's (a magic registered with one always has it)."""
        if self.shell is None:
            raise UsageError("%%icedtea runs in an IPython shell")
        return self.shell.user_ns

    def _line(self, line: str) -> Any:
        words = shlex.split(line)
        if words[:1] == ["runs"]:
            return [run.summary() | {"dag": None, "progress": None} for run in registry.runs()]
        if words[:1] == ["export"] and len(words) == 2:
            export_session(words[1])
            return None
        if words[:1] == ["open"] and len(words) == 2:
            try:
                return registry.open_run(words[1])
            except StoreError as exc:  # not a run's folder: one line, like other bad input
                raise UsageError(f"%icedtea open: {exc}") from None
        raise UsageError("usage: %icedtea runs | %icedtea open PATH | %icedtea export "
                         "NOTEBOOK.ipynb | %%icedtea [options] (cell)\n"
                         + _parser().format_help())


def export_session(path: str) -> list[str]:
    """``%icedtea export debug.ipynb``: the session of the run being debugged (the last
    one debugged, else the last run) as a notebook; prints and returns what needs the
    user's hand."""
    if not path.endswith(".ipynb"):
        raise UsageError(f"%icedtea export: the export is a notebook: {path!r} must end "
                         "in .ipynb")
    try:
        run = registry.debugged_run() or registry.last_run()
    except LookupError as exc:
        raise UsageError(f"%icedtea export: {exc}") from None
    hand = run.export_notebook(path)
    print(f"icedtea: run {run.id} ({run.version}) exported to {path}"
          + "".join(f"\n  needs your hand: {item}" for item in hand))
    return hand


def load(ipython: Any) -> None:
    from .instrument.sql import observe_registrations

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    ipython.register_magics(IcedteaMagics)
    cell_outcomes.watch(ipython)
    observe_registrations()  # spark.udf.register: a SQL query of a later cell hosts them
    _point_existing_workers_here()
    try:
        from .comm.target import register_target

        register_target()
    except ImportError as exc:  # the sidebar and the panel's comm cannot work: say why
        LOG.warning("icedtea: the JupyterLab sidebar's comm target is not registered: %s", exc)


def _point_existing_workers_here() -> None:
    """Loaded after the SparkSession: its workers run this kernel's Python where they can
    (a cluster's that cannot import icedtea_jupyter are refused at %%icedtea, with the fix)."""
    from .session.execution import _spark_context

    try:
        for note in point_workers_here(_spark_context()):
            print(f"icedtea: {note}")
    except WorkersCannotImport:
        pass


def unload(ipython: Any) -> None:
    pass
