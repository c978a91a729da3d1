"""Run a drawn pipeline plain and under ``%%icedtea`` in a real IPython shell, and check
every promise against an oracle computed without the product.

Each check returns the violations it found (strings naming the promise, what the product
said and what the oracle says); ``check_pipeline`` runs them all. The invariants:

- the result with ``%%icedtea`` (any flags) equals the plain run's;
- every node of ``run.dag`` is connected to a real source, and no source is made up;
- ``run.metrics()``: each elementwise operator's records in and out equal plain counts;
- θ an ``Operator`` (``Tally``): its state in every interaction's snapshot and after every
  jump equals ``Tally`` replayed in plain Python over the records the snapshot counts;
- ``--lineage``: ``trace_back(row)`` equals the emulator's witnesses (or says in its notes
  why it cannot), ``trace_forward`` of a witness reaches the row and what the emulator says;
- ``--reuse``: a re-run answers the same result; after ``Tally.WEIGHT`` changes, the
  result is the new plain one and nothing is reused.
"""
from __future__ import annotations

from collections import Counter
from typing import Any

import icedtea_jupyter
from icedtea_jupyter.lineage.frames import Untraced
from icedtea_jupyter.lineage.tables import NoLineage

from . import emulator, frames
from .grammar import ELEMENTWISE, Pipeline

SOURCES = ("parallelize", "createDataFrame")

CHECKED: Counter = Counter()  # how many of each comparison were made (bench/pipelines.py)


class Runner:
    """A pipeline's cells in ``shell``, its runs' store under ``store``."""

    def __init__(self, shell: Any, store: str) -> None:
        self.shell, self.store = shell, store

    def define(self, pipeline: Pipeline) -> None:
        self.shell.user_ns.update(DATA=pipeline.data, OTHER=pipeline.other)
        self.shell.run_cell(pipeline.preamble()).raise_error()

    def plain(self, code: str, name: str = "out") -> Any:
        self.shell.run_cell(code).raise_error()
        return self.shell.user_ns[name]

    def record(self, pipeline: Pipeline, extra: str = "", cell_id: str = "generated") -> Any:
        flags = " ".join(pipeline.flags)
        if pipeline.theta:
            flags += f" --interesting {pipeline.theta}"
            if "Tally" in pipeline.cell() or "running" in pipeline.cell():
                flags += " --interact-when \"len(str(row)) % 3 == 0\""
        self.shell.run_cell_magic(
            "icedtea", f"--wait --no-panel --cell {cell_id} --store {self.store} "
            f"{flags} {extra}", pipeline.cell())
        return icedtea_jupyter.last_run()


def same(pipeline: Pipeline, got: list, want: list) -> bool:
    if pipeline.ordered_result:
        return got == want
    return emulator.bag(got) == emulator.bag(want)


def check_result(pipeline: Pipeline, got: list, plain: list) -> list[str]:
    found = []
    if not same(pipeline, got, plain):
        found.append(f"result: %%icedtea gave {got[:8]!r}… ({len(got)} rows), the plain run "
                     f"{plain[:8]!r}… ({len(plain)} rows)")
    emulated = _emulated(pipeline)
    if emulated is not None and emulator.bag(plain) != emulator.bag([r for r, _ in emulated]):
        found.append("emulator: disagrees with the plain run (a bug of the oracle)")
    return found


def check_dag(run: Any) -> list[str]:
    """Every node reaches a source; no node in the middle of the cell is a made-up one."""
    nodes = {n.id: n for n in run.dag.operators}
    found = []
    for node in nodes.values():
        upstream = node.inputs or node.parents
        if not upstream and node.api not in SOURCES:
            found.append(f"dag: {node.name!r} ({node.api}) has no upstream and is no source "
                         f"of the cell: the DAG is cut there")
    return found


def check_metrics(runner: Runner, pipeline: Pipeline, run: Any) -> list[str]:
    metrics = run.metrics()
    found = []
    for position, step in enumerate(pipeline.steps):
        hosted = ("udf", "pandas_udf") if isinstance(pipeline, frames.FramePipeline) \
            else ELEMENTWISE
        if step.kind not in hosted:
            continue
        rows = metrics[metrics["operator"] == step.name]
        want_in = runner.plain(f"_n = {pipeline.chain(position)}.count()", "_n")
        want_out = runner.plain(f"_n = {pipeline.chain(position + 1)}.count()", "_n")
        got = (int(rows["records_in"].sum()), int(rows["records_out"].sum()))
        CHECKED["operator counts compared"] += 1
        if got != (want_in, want_out):
            found.append(f"metrics: {step.name} in/out {got}, plain counts "
                         f"{(want_in, want_out)}")
    return found


def check_snapshots(runner: Runner, pipeline: Pipeline, run: Any) -> list[str]:
    """θ a Tally: its state at each interaction and after each jump, against a replay."""
    position = next((i for i, s in enumerate(pipeline.steps) if s.name == pipeline.theta),
                    None)
    if position is None or pipeline.steps[position].kind != "tally":
        return []
    parts = runner.plain(f"_parts = {pipeline.chain(position)}.glom().collect()", "_parts")
    tally = runner.shell.user_ns["Tally"]
    found = []
    dbg = run.debugger()
    try:
        for interaction in run.interactions:
            dbg.jump(interaction.index)
            for partition, records in enumerate(parts):
                count = interaction.counts.get((pipeline.theta, partition))
                if count is None:
                    continue
                want = _replayed(tally, records[:count])
                shown = run.snapshot(interaction.index).state(pipeline.theta, partition)
                jumped = dbg.state(pipeline.theta, partition)
                CHECKED["states compared"] += 2
                for what, got in (("snapshot", shown), ("jump", jumped)):
                    if _normal(got) != _normal(want):
                        found.append(f"{what} I{interaction.index} partition {partition} "
                                     f"after {count} records: {got!r}, replayed {want!r}")
                if count < len(records):  # a step over θ's next record: one record on
                    dbg.step_over(partition=partition)
                    stepped = dbg.state(pipeline.theta, partition)
                    CHECKED["steps compared"] += 1
                    if _normal(stepped) != _normal(_replayed(tally, records[:count + 1])):
                        found.append(f"step_over after I{interaction.index} on partition "
                                     f"{partition}: {stepped!r}, replayed "
                                     f"{_replayed(tally, records[:count + 1])!r}")
                    dbg.jump(interaction.index)
    finally:
        close = getattr(dbg, "close", None)
        if close is not None:
            close()
    return found


def check_lineage(pipeline: Any, run: Any, result: list) -> list[str]:
    items = _emulated(pipeline)
    if "--lineage" not in pipeline.flags or items is None or not result:
        return []
    found = []
    for row in sorted(set(result), key=repr)[:3]:
        try:
            trace = run.trace_back(row)
        except (NoLineage, Untraced, LookupError) as why:  # said so; unless it blames flags
            if "recorded without --lineage" in str(why):
                return [f"trace_back({row!r}): {why}"]
            CHECKED["traces refused with a reason"] += 1
            return found
        records = trace.to_pandas()
        got = Counter(map(repr, records["record"])) if len(records) else Counter()
        want = emulator.witnesses(pipeline, items, row)
        CHECKED["backward traces compared"] += 1
        if got != want and not trace.notes:
            found.append(f"trace_back({row!r}): {dict(got)}, witnesses {dict(want)}, no note")
        if not want:
            continue
        source = eval(next(iter(want)))  # noqa: S307 - a repr the emulator made
        ahead = run.trace_forward(source)
        rows = ahead.to_pandas()
        reached = set(map(repr, rows["record"])) if len(rows) else set()
        expected = emulator.forward(pipeline, items, source)
        CHECKED["forward traces compared"] += 1
        if reached != expected and not ahead.notes:
            found.append(f"trace_forward({source!r}): {sorted(reached)}, the emulator "
                         f"{sorted(expected)}, no note")
    return found


def check_skew(runner: Runner, pipeline: Pipeline, run: Any) -> list[str]:
    """``--skew``: every heavy key's exact count within its stated bounds (``low``–``high``),
    and equal to the count where the report says it is exact."""
    if "--skew" not in pipeline.flags or isinstance(pipeline, frames.FramePipeline):
        return []
    found = []
    for position, step in enumerate(pipeline.steps):
        if step.kind not in ("reduceByKey", "groupCount"):
            continue
        exact = runner.plain(f"_keys = dict({pipeline.chain(position)}"
                             ".map(lambda kv: kv[0]).countByValue())", "_keys")
        keys = run.skew(step.name).keys
        CHECKED["skew keys compared"] += len(keys)
        for key, count, low, high, is_exact in zip(keys["key"], keys["count"], keys["low"],
                                                   keys["high"], keys["exact"]):
            true = exact.get(key, 0)
            if not low <= true <= high or (is_exact and count != true):
                found.append(f"skew {step.name}: key {key!r} counted {count} ({low}–{high}"
                             f"{', exact' if is_exact else ''}), exactly {true}")
    return found


def check_reuse(runner: Runner, pipeline: Pipeline, plain: list) -> list[str]:
    found = []
    first = runner.record(pipeline, "--reuse", cell_id="reuse")
    again = runner.record(pipeline, "--reuse", cell_id="reuse")
    got = runner.shell.user_ns["out"]
    if not same(pipeline, got, plain):
        found.append(f"reuse: a re-run gave {got[:8]!r}…, the plain run {plain[:8]!r}…")
    if "Tally" not in pipeline.cell():
        return found
    runner.shell.run_cell(f"Tally.WEIGHT = {pipeline.weight + 1}").raise_error()
    try:
        changed = runner.record(pipeline, "--reuse", cell_id="reuse")
        got = runner.shell.user_ns["out"]
        want = runner.plain(pipeline.cell())
        if not same(pipeline, got, want) or changed.reused_from in (first.id, again.id):
            found.append(f"reuse: after Tally.WEIGHT changed, {got[:8]!r}…, the plain run "
                         f"{want[:8]!r}…, reused_from={changed.reused_from} (the runs before "
                         f"the change: {first.id}, {again.id})")
    finally:
        runner.shell.run_cell(f"Tally.WEIGHT = {pipeline.weight}").raise_error()
    return found


def check_pipeline(runner: Runner, pipeline: Pipeline, reuse: bool = False) -> list[str]:
    """Every invariant of one pipeline; the violations found."""
    runner.define(pipeline)
    plain = runner.plain(pipeline.cell())
    run = runner.record(pipeline)
    if run.status != "finished":
        return [f"run: {run.status}: {run.error}"]
    got = runner.shell.user_ns["out"]
    CHECKED["pipelines"] += 1
    found = check_result(pipeline, got, plain) + check_dag(run)
    found += check_metrics(runner, pipeline, run)
    found += check_snapshots(runner, pipeline, run)
    found += check_lineage(pipeline, run, got)
    found += check_skew(runner, pipeline, run)
    if reuse:
        found += check_reuse(runner, pipeline, plain)
    return found


def _emulated(pipeline: Any) -> list | None:
    """The emulator's output records with their witnesses (None: not emulated)."""
    if isinstance(pipeline, frames.FramePipeline):
        return frames.emulate(pipeline)
    return emulator.emulate(pipeline) if emulator.emulable(pipeline) else None


def _replayed(tally: Any, records: list) -> dict:
    operator = tally()
    operator.open()
    for record in records:
        list(operator.process(record))
    return dict(vars(operator))


def _normal(state: Any) -> Any:
    if isinstance(state, dict):
        return {k: _normal(v) for k, v in state.items()}
    return state
