"""θ's input records for replay: recorded with ``--record-inputs``, or regenerated.

Regeneration runs θ's upstream for one partition with Spark (``SparkContext.runJob``)
and checks the records against what the run logged — their number and the checksums
of the records θ's worker sampled — so a rewritten source or a different shuffle read
order gives a clear error instead of wrong states.
"""
from __future__ import annotations

import pickle
import zlib
from typing import Any

from ..executor.batches import batch_checksum
from ..executor.udf_errors import edited_calls
from ..store.control_files import apply_edits, apply_error_edits, edits_of
from ..store.staged_inputs import (
    read_staged_inputs,
    read_staged_links,
    write_staged_inputs,
    write_staged_links,
)
from .dataframe_inputs import DataFrameUpstream, every_partition
from .logs import Logs, RecordedRun, in_grouped_agg
from .pushdown import pushed_below
from .row_links import NotRowForRow
from .row_links import links as row_links


class InputsChanged(RuntimeError):
    """The records θ would replay are not the ones it processed in the run."""


class ReplayInputs:
    """``records(partition)``: θ's inputs on a partition, in the run's order (cached)."""

    def __init__(self, run: RecordedRun, logs: Logs) -> None:
        self.run = run
        self.logs = logs
        self._cache: dict[int, list] = {}
        self.source: dict[int, str] = {}  # partition -> "recorded" | "regenerated"
        self._staged: set[int] = set()  # partitions whose regenerated inputs are on disk
        self.pinned: dict[str, tuple] = {}  # SQL settings set to the run's to regenerate
        self._sides: dict[tuple[int, int], list] = {}  # (join, union partition) -> combiners
        self._regenerated: dict[tuple[str, int], list] = {}  # DataFrame operators after θ
        self._links: dict[int, dict[int, list[int]] | str] = {}  # by operator (row_links)

    def records(self, partition: int) -> list:
        if partition not in self._cache:
            self._cache[partition] = self._load(partition)
        return self._cache[partition]

    def stage(self) -> None:
        """Make every partition's inputs loadable without Spark: regenerate and keep in
        the run store those that were neither recorded nor staged (for the replay process)."""
        for partition in self.logs.partitions:
            self.records(partition)
            if self.source[partition] == "regenerated" and partition not in self._staged:
                write_staged_inputs(self.run.path, partition, self._cache[partition])
                self._staged.add(partition)
        self.stage_sides()
        for fed in self.logs.fed:
            for q, (kind, *where) in fed.sources.items():
                if kind == "regenerated":
                    self.regenerated(where[0], q)
                    self._stage_links(where[0], q)

    def links(self, name: str, partition: int) -> list[int]:
        """The rows of ``name``'s input on ``partition`` that each of θ's input batches
        gives (``row_links.links``); ``LookupError`` saying why they cannot be known."""
        node = self.run.dag.node(name)
        if node.id not in self._links:
            try:
                self._links[node.id] = read_staged_links(self.run.path, node.id)
            except LookupError:
                self._links[node.id] = self._computed_links(node)
        found = self._links[node.id]
        if isinstance(found, str):
            raise LookupError(found)
        return found.get(partition, [])

    def _stage_links(self, name: str, partition: int) -> None:
        if self.logs.same_stage_as_theta(name, partition):
            try:
                self.links(name, partition)
            except LookupError:
                pass  # the reason is staged too, where it will not change

    def _computed_links(self, node: Any) -> dict[int, list[int]] | str:
        """The links, computed with Spark in this kernel and staged; or why not."""
        theta = self.run.dag.node(self.logs.chain[0])
        upstream = self.run.upstream_rdd(node.id)
        theta_upstream = self.run.upstream_rdd(theta.id)
        if not isinstance(upstream, DataFrameUpstream) or \
                not isinstance(theta_upstream, DataFrameUpstream):
            return ("this kernel no longer has the cell's DataFrames to compute which of "
                    "θ's rows reach it")
        function = getattr(self.logs.operator(theta.name)(), "f", None)
        try:
            if len(self.logs.chain) > 1 or function is None or \
                    theta_upstream.api not in ("mapInPandas", "mapInArrow"):
                raise NotRowForRow("θ is not a mapInPandas or mapInArrow of its own")
            found: dict[int, list[int]] | str = row_links(theta_upstream, function, upstream)
        except NotRowForRow as why:
            found = str(why)
        except Exception as error:  # noqa: BLE001 - Spark could not rebuild the plan
            found = ("Spark could not run the operators between θ and it on θ's tagged "
                     f"rows ({type(error).__name__}: {str(error)[:200]})")
        if isinstance(found, str):
            write_staged_links(self.run.path, node.id, None, found)
        else:
            write_staged_links(self.run.path, node.id, found)
        return found

    def regenerated(self, name: str, partition: int) -> list:
        """The input batches (or groups) of ``name``, a DataFrame operator of G(θ) in a
        worker of its own, on ``partition``: staged, or regenerated from its input
        DataFrame with Spark, checked against its worker's log and kept in the run store."""
        if (name, partition) not in self._regenerated:
            node = self.run.dag.node(name)
            try:
                records = read_staged_inputs(self.run.path, partition, node.id)
            except LookupError:
                upstream = self.run.upstream_rdd(node.id)
                if upstream is not None and hasattr(upstream, "context"):  # an RDD: a join's
                    records = self._regenerate_rdd(name, partition, upstream)
                elif not isinstance(upstream, DataFrameUpstream):
                    raise LookupError(
                        f"the inputs of {name!r} on partition {partition} were not kept and "
                        "this kernel no longer has the pipeline that produced them: run "
                        "the cell again and debug the new run in that kernel (its first "
                        "jump keeps them in the run store)") from None
                else:
                    self._regenerate_all(name, upstream)
                    return self._regenerated[(name, partition)]
            self._regenerated[(name, partition)] = records
        return self._regenerated[(name, partition)]

    def _regenerate_rdd(self, name: str, partition: int, upstream: Any) -> list:
        """Partition ``partition`` of the RDD ``name`` reads (a join of inputs partitioned
        alike: the combiners its map-side combine made), with Spark, checked against the
        number its worker logged and kept in the run store."""
        node = self.run.dag.node(name)
        records = list(upstream.context.runJob(upstream, lambda it: it, [partition]))
        log = self.logs.log(name, partition)
        if log is not None and log.records_in != len(records):
            raise InputsChanged(
                f"{name!r} read {log.records_in} records on partition {partition} in the run "
                f"and would read {len(records)} now: its inputs changed since the run, or an "
                "operator before it is not deterministic; run the cell again and debug the "
                "new run")
        write_staged_inputs(self.run.path, partition, records, node.id)
        return records

    def _regenerate_all(self, name: str, upstream: DataFrameUpstream) -> None:
        """Every partition of ``name``'s inputs from one query, checked and staged."""
        node = self.run.dag.node(name)
        by_partition, pinned = every_partition(upstream)
        for q in next(f.partitions for f in self.logs.fed if f.names[0] == name):
            batches = by_partition.get(q, [])
            self._check_batches(q, batches, None, pinned, name)
            log = self.logs.log(name, q)
            records = batches if log is None or log.batch_rows is None else \
                batches[:len(log.batch_rows)]
            write_staged_inputs(self.run.path, q, records, node.id)
            self._regenerated[(name, q)] = records

    def side(self, join: str, partition: int) -> list:
        """The combiners the map side of ``join`` (after θ's chain) made on union
        partition ``partition`` of an input outside G(θ): staged, or regenerated with
        Spark (the run's own map side, for that partition alone)."""
        node = self.run.dag.node(join)
        if (node.id, partition) not in self._sides:
            try:
                combiners = read_staged_inputs(self.run.path, partition, node.id)
            except LookupError:
                upstream = self.run.upstream_rdd(node.id)
                if upstream is None:
                    raise LookupError(
                        f"the other input of {join!r} (its map side on partition {partition}) "
                        "was not kept and this kernel no longer has the pipeline that "
                        "produced it: run the cell again and debug the new run in that "
                        "kernel (its first jump keeps it in the run store)") from None
                combiners = list(upstream.context.runJob(upstream, lambda c: c, [partition]))
                write_staged_inputs(self.run.path, partition, combiners, node.id)
            self._sides[(node.id, partition)] = combiners
        return self._sides[(node.id, partition)]

    def stage_sides(self) -> None:
        """Regenerate and keep the map sides of the joins after θ's chain (the inputs
        outside G(θ)) for the replay process."""
        for stage in self.logs.fed:
            for source in {s for s in stage.sources.values() if s[0] == "join"}:
                _, join, sides, offsets = source
                ends = [*offsets[1:], sum(self.run.dag.node(join).input_partitions or [])]
                for leaf, start, end in zip(sides, offsets, ends):
                    for m in range(start, end) if leaf is None else ():
                        self.side(join, m)

    def _load(self, partition: int) -> list:
        records = self._taken(partition)
        if self._udf_theta():  # its calls holding rows edited after they raised
            return edited_calls(records, self._edits(partition), self._group_calls())
        return records

    def _udf_theta(self) -> bool:
        """θ is called per row, batch or group (a UDF, applyInPandas)."""
        return self.run.dag.require_interesting().api in ("udf", "applyInPandas")

    def _group_calls(self) -> str | None:
        theta = self.run.dag.require_interesting()
        if theta.api == "applyInPandas":
            return "group"
        return "agg" if in_grouped_agg(self.run.dag, theta) else None

    def _taken(self, partition: int) -> list:
        try:
            records = self.run.recorded_inputs(partition)
            self.source[partition] = "recorded"
        except LookupError:
            try:
                records = read_staged_inputs(self.run.path, partition)
                self.source[partition] = "regenerated"
                self._staged.add(partition)
                return records  # checked when they were staged
            except LookupError:
                records = self._regenerate(partition)
                self.source[partition] = "regenerated"
        checked = self._checked(partition, records)
        if self.source[partition] == "recorded" and not self._udf_theta():
            # kept raw: the culprits as Spark gave them
            return apply_error_edits(checked, self._edits(partition))
        return checked

    def _regenerate(self, partition: int) -> list:
        theta = self.run.dag.require_interesting()
        upstream = self.run.upstream_rdd(theta.id)
        if upstream is None:
            raise LookupError(
                f"θ's inputs on partition {partition} were not recorded and this kernel no "
                f"longer has the pipeline that produced them: {self._advice()}")
        if isinstance(upstream, DataFrameUpstream):
            batches, planned, pinned = upstream.batches(partition)
            self.pinned = pinned
            self._check_batches(partition, batches, planned, pinned)
            return batches
        records = list(upstream.context.runJob(upstream, lambda records: records, [partition]))
        return apply_edits(records, self._edits(partition))  # live control

    def _edits(self, partition: int) -> list[dict]:
        return edits_of(self.run.path, self.run.dag.require_interesting().id, partition)

    def _recorded_flag(self) -> bool:
        options = (getattr(self.run, "manifest", None) or {}).get("options") or {}
        return bool(options.get("record_inputs"))

    def _advice(self) -> str:
        """The one thing that gives replay θ's inputs as the run saw them."""
        if self._recorded_flag():
            return ("the run was recorded with --record-inputs but no successful task of "
                    "θ kept them (run.alerts() says why); run the cell again in this kernel "
                    "and debug the new run")
        return "run the cell again with --record-inputs to keep what θ saw"

    def _whole_batches(self, operator: str) -> bool:
        """Whether ``operator`` takes whole batches (an iterator UDF, replayed as a
        mapInPandas), not one call's arguments a record."""
        from ..executor.wrappers import BatchFunction

        try:
            return isinstance(self.logs.operator(operator)(), BatchFunction)
        except LookupError:
            return False

    def _other_causes(self) -> str:
        return ("The source changed since the run, or its order is not deterministic (a "
                f"shuffle read){self._pushed_filter()}")

    def _pushdown(self) -> str:
        """For a UDF θ, the filters the cell's plan runs before it, if the kernel still
        has the cell's DataFrames to tell ("": none found)."""
        theta = self.run.dag.require_interesting()
        pushed = pushed_below(getattr(self.run, "recorder", None), theta.id) \
            if theta.api == "udf" else []
        if not pushed:
            return ""
        return (f"Spark ran the cell's filter {' and '.join(pushed)} before θ: its "
                f"optimizer moved it below the UDF column {theta.name!r} (the plan's "
                "Filter is beneath its EvalPython), so θ was called only on the rows that "
                "pass it, not on every row of the DataFrame it is computed on")

    def _pushed_filter(self) -> str:
        """For a UDF θ: the other way its calls differ from its input DataFrame's rows."""
        if self.run.dag.require_interesting().api != "udf":
            return ""
        return (", or Spark ran a filter of the cell before θ (it moves filters on other "
                "columns below a UDF column, so θ was called on fewer rows than the "
                "DataFrame it is computed on has)")

    def _checked(self, partition: int, records: list) -> list:
        log = self.logs.log(self.logs.chain[0], partition)
        if log is None:
            return records
        if log.batch_rows is not None:
            self._check_batches(partition, records, None, {})
            return records[:len(log.batch_rows)]
        if len(records) < log.records_in:
            raise InputsChanged(
                f"partition {partition} of θ's input now has {len(records)} records; in the "
                f"run θ processed {log.records_in}. "
                f"{self._pushdown() or 'The source changed since the run'}: {self._advice()}")
        for index, crc in log.checks():
            if index < len(records) and zlib.crc32(pickle.dumps(records[index], 5)) != crc:
                raise InputsChanged(
                    f"record #{index} of θ's input on partition {partition} differs from the "
                    f"one θ processed in the run (now: {records[index]!r:.200}). "
                    f"{self._pushdown() or self._other_causes()}: {self._advice()}")
        return records[:log.records_in]

    def _check_batches(self, partition: int, batches: list, planned: int | None,
                       pinned: dict, operator: str | None = None) -> None:
        """A batch function's inputs against its log: the rows of each batch, the sums
        of the batches its worker summed (``operator``: θ, else one after it)."""
        name = operator or self.logs.chain[0]
        log = self.logs.log(name, partition)
        if log is None or log.batch_rows is None:
            return
        node = self.run.dag.node(name)
        api = node.api
        unit = "group" if api == "applyInPandas" or in_grouped_agg(self.run.dag, node) \
            else "batch"
        whose = "θ" if operator is None else repr(operator)
        advice = self._advice() if operator is None else (
            f"record the cell again with --interesting {operator!r} --record-inputs to "
            "keep what it saw")
        # a group's or a pandas UDF's record is its call's arguments: (key,) frame, Series…
        per_call = api == "applyInPandas" or (api == "udf" and not self._whole_batches(name))
        frames = [b[-1] for b in batches] if per_call else batches
        run_rows = [int(n) for n in log.batch_rows]
        rows = [batch_length(b) for b in frames[:len(run_rows)]]
        if rows != run_rows:
            why = _why(planned, self.logs, pinned, self._pushed_filter(),
                       self._pushdown()) if operator is None else _why(None, self.logs, pinned)
            raise InputsChanged(
                f"partition {partition} of {whose}'s input now comes in "
                f"{_batches(rows, unit)}; in the run {whose} took {_batches(run_rows, unit)}. "
                f"{why}{advice}")
        for index, crc in log.checks():
            if index < len(frames) and batch_checksum(frames[index]) != crc:
                start = sum(run_rows[:index])
                raise InputsChanged(
                    f"{unit} #{index} (rows {start}–{start + run_rows[index] - 1}) of "
                    f"{whose}'s input on partition {partition} has the same rows as in the "
                    "run but other values: the source changed since the run, or the rows' "
                    f"order is not deterministic (a shuffle read, or {whose}'s upstream "
                    f"operators): {advice}")


def batch_length(batch: Any) -> int:
    if isinstance(batch, tuple):
        batch = batch[0] if batch else ()
    return len(batch)


def _batches(rows: list[int], unit: str) -> str:
    shown = ", ".join(str(n) for n in rows[:8]) + (", …" if len(rows) > 8 else "")
    plural = {"batch": "batches", "group": "groups"}[unit] if len(rows) != 1 else unit
    return f"{len(rows)} {plural} of {sum(rows)} rows ({shown})"


def _why(planned: int | None, logs: Logs, pinned: dict, pushed: str = "",
         pushdown: str = "") -> str:
    """What replay knows of why the batches differ (``pushed``: a UDF's other cause;
    ``pushdown``: the filter the plan shows Spark ran before θ)."""
    why = []
    if pushdown:
        why.append(pushdown)
    elif planned is not None and logs.partitions and planned != max(logs.partitions) + 1:
        why.append(f"Spark now plans θ's input in {planned} partitions, the run had "
                   f"{max(logs.partitions) + 1} (the source's files or splits changed, or, "
                   "with adaptive query execution on, the data it sizes shuffle partitions "
                   "by)")
    else:
        why.append(f"the source changed since the run{pushed}")
    if pinned:
        why.append("the run's settings " + ", ".join(
            f"{k}={run!s}" for k, (_, run) in pinned.items()) + " were restored for it")
    return "; ".join(why) + ": "
