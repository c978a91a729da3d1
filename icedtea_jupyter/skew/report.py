"""``run.skew(operator)``: an operator's load per partition, its heavy keys, the skew
test, advice and charts (Reshape), final from the run store or live while it records.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Any

import pandas as pd

from ..dag import OperatorNode
from .advice import Advice, Situation, advise
from .chart import (
    partitions_chart,
    side_by_side,
    spec_with,
    stacked_records,
    stacked_rows,
    with_rising,
)
from .heatmap import (
    column_span,
    heatmap_chart,
    heatmap_spec,
    in_columns,
    partition_cells,
    partition_count,
)
from .keys import KeyCounts, Keys, merge_summaries
from .rules import Rules, skewed
from .source import (
    FRAME_JOIN,
    SkewSource,
    is_frame_join,
    key_node,
    load_node,
    occurrence,
    records_in,
    with_frame_join,
    worker_key,
)
from .stages import jvm_stages, stage_cells, stage_id, stage_node, stage_workers
from .timeline import chart_points, grid, named_partitions, on_grid, timeline_chart

PARTITION_COLUMNS = ["partition", "records", "bytes", "seconds"]
NO_JOIN_TIMELINE = ("a DataFrame join's keys are counted by Spark after the run: its "
                    "load over time is its stages' (run.skew('stage N'))")
NO_TIMELINE = ("this run's store has no load over time (runs recorded before it was kept "
               "have none)")


class SkewReport:
    """The skew of one operator (see the README's Skew section)."""

    def __init__(self, source: SkewSource, operator: str, rules: Rules | None = None,
                 top: int = 20) -> None:
        stage = stage_id(operator)
        if stage is not None and stage in {t["stage"] for t in source.stage_tasks or ()}:
            source = replace(source, workers=source.workers
                             + stage_workers(source.stage_tasks or [], stage))
            node = stage_node(stage)
        else:
            node = self._operator_node(source, operator)
            if is_frame_join(node):
                source = with_frame_join(source, node)
        self.source, self.top = source, top
        self.node = load_node(source.dag, node)
        self.key_node = key_node(source.dag, node)
        self.operator = self.node.name
        self.api = FRAME_JOIN if is_frame_join(self.node) else self.node.api
        self.live = source.live
        self.waiting: dict[int, int] | None = \
            source.waiting(self.node.id) if self.live and source.waiting else None
        self.keys_sketch: Keys = merge_summaries(source.sketches.get(self.key_node.id, []))
        if self.keys_sketch.workers and not self.live and self.key_node.phase == "combine":
            self.keys_sketch.uncounted(records_in(source.workers, self.key_node))
        self._timeline: tuple[OperatorNode, list[tuple[int, tuple]]] | None = None
        keyed = self.keyed
        self.rules = rules or Rules(load="key_records" if keyed else "records")
        self.rules.resolved({})  # a load that is none, a factor below 0: ValueError now

    @staticmethod
    def _operator_node(source: SkewSource, operator: str) -> OperatorNode:
        stages = ", ".join(f"'stage {n}'" for n in jvm_stages(source.stage_tasks or []))
        where = (f"; JVM stages from Spark's status store: {stages}" if stages else
                 "; no JVM stage has tasks in Spark's status store yet"
                 if source.live else "")
        try:
            node = source.dag.node(operator)
        except KeyError as exc:
            raise KeyError(f"{exc.args[0]}{where}") from None
        if node.kind != "python" and not node.hosted and not is_frame_join(node):
            raise ValueError(f"{node.name!r} is a JVM operator ({node.api}): Python "
                             "operators have per-partition loads; name one of "
                             + ", ".join(repr(n.name) for n in source.dag.loaded_operators)
                             + where)
        return node

    @property
    def jvm_stages(self) -> list[str]:
        """The stages no Python operator ran in, as ``run.skew`` names them."""
        return [f"stage {n}" for n in jvm_stages(self.source.stage_tasks or [])]

    @property
    def keyed(self) -> bool:
        """Whether the operator's keys were counted (``--skew``, a key-partitioned one)."""
        return self.keys_sketch.n > 0

    # --- loads ---------------------------------------------------------------------
    @property
    def partitions(self) -> pd.DataFrame:
        """partition, records, bytes, seconds (and ``key_records`` for keyed operators:
        the records the partition's keys carry, the heavy ones counted, the rest spread
        like the partition's own records; ``running`` and ``waiting`` while the run
        records: the bytes Spark knows the partition still has to read, NaN where it
        knows none; ``waiting_note`` says why there are none at all)."""
        rows: dict[int, dict] = {}
        for w in self.source.workers:
            if w["operator"] != self.node.id:
                continue
            row = rows.setdefault(int(w["partition"]), {"partition": int(w["partition"]),
                                                       "records": 0, "bytes": 0,
                                                       "seconds": 0.0, "running": False})
            row["records"] += int(w.get("records_in") or 0)
            row["bytes"] += int(w.get("bytes_in") or 0)
            row["seconds"] += float(w.get("seconds") or 0.0)
            row["running"] |= w.get("status") == "running"
        if self.keyed and self.node.partitions:  # a reduce side not yet run
            for part in range(self.node.partitions):
                rows.setdefault(part, {"partition": part, "records": 0, "bytes": 0,
                                       "seconds": 0.0, "running": False})
        for part in self.waiting or ():  # a partition whose task has not started
            rows.setdefault(part, {"partition": part, "records": 0, "bytes": 0,
                                   "seconds": 0.0, "running": False})
        frame = pd.DataFrame(sorted(rows.values(), key=lambda r: r["partition"]),
                             columns=PARTITION_COLUMNS + ["running"])
        if self.keyed:
            frame["key_records"] = self._key_records(frame)
        if not self.live:
            return frame.drop(columns="running")
        waiting = self.waiting or {}
        frame["waiting"] = [waiting.get(int(p), float("nan")) for p in frame["partition"]]
        return frame

    @property
    def waiting_note(self) -> str:
        """Why the live ``waiting`` column is empty, if it is (else "")."""
        if not self.live or self.waiting is not None:
            return ""
        return self.source.waiting_note or (
            "Spark does not know this stage's partition sizes (an in-memory source such "
            "as parallelize, a stage not started yet, or partitions read from several "
            "inputs)")

    def _key_records(self, frame: pd.DataFrame) -> list[float]:
        heavy = self.keys_sketch.per_partition()
        rest = max(self.keys_sketch.n - sum(heavy.values()), 0)
        total = float(frame["records"].sum())
        if not total:  # live, before the reduce side: the rest spread evenly
            return [heavy.get(p, 0) + rest / len(frame) for p in frame["partition"]]
        return [heavy.get(p, 0) + rest * r / total
                for p, r in zip(frame["partition"], frame["records"])]

    def loads(self, frame: pd.DataFrame | None = None) -> dict[int, float]:
        """partition -> the load the skew test uses (``rules.load``); ``frame``: the
        ``partitions`` already read."""
        frame = self.partitions if frame is None else frame
        if frame.empty or self.rules.load not in frame:
            return {}
        return {int(p): float(v) for p, v in zip(frame["partition"], frame[self.rules.load])}

    # --- keys, the test, advice ---------------------------------------------------------
    @property
    def keys(self) -> pd.DataFrame:
        """key, count, share of the records, partition, error, low, high, exact; heaviest
        first. ``exact``: ``count <= true <= count + error`` (Misra–Gries); else ``count``
        is an estimate and ``low``–``high`` a statistical interval (``bound`` says so)."""
        return self.keys_sketch.frame(self.top)

    @property
    def bound(self) -> str:
        """What the key counts are (exact, lower bounds, estimates), with their numbers."""
        return self.keys_sketch.note()

    @property
    def warnings(self) -> list[str]:
        """Why the key table is empty where ``--skew`` should have filled it."""
        return [self.source.keys_note] if self.source.keys_note and self.keys.empty else []

    @property
    def error(self) -> int:
        """The Misra–Gries bound of the keys counted exactly (``executor/sketch.py``)."""
        return self.keys_sketch.error

    @property
    def estimated(self) -> int:
        """Records whose keys were sampled, not all counted (``bound`` says so)."""
        return self.keys_sketch.sketch.estimated

    @property
    def skewed(self) -> pd.DataFrame:
        """The partitions either rule flags: partition, load, rule, why."""
        return skewed(self.loads(), self.rules)

    @property
    def parameters(self) -> dict:
        """Both rules' parameters as used (defaults filled in)."""
        return self.rules.resolved(self.loads()).as_dict()

    @property
    def advice(self) -> list[Advice]:
        """Remedies, best first, each with code and the heaviest partition's shrink."""
        keys = self.keys_sketch
        canonical = keys.heavy()
        heavy_keys = [keys.values[k] for k in canonical]
        counts = keys.sketch.counts
        per_part: dict[int, float] = {}
        for k in canonical:
            part = keys.partitions.get(k, -1)
            per_part[part] = per_part.get(part, 0) + counts.get(k, 0)
        top = keys.sketch.top(1)
        return advise(Situation(self.api, self.loads(), per_part, heavy_keys,
                                float(top[0][1]) if top else 0.0, self.source.cell,
                                self._input_records(), self.node.name, self.node.named,
                                occurrence(self.source.dag, self.node)))

    def _input_records(self) -> list[float]:
        """A join's records per input (its reduce side counts them under --skew)."""
        counted = self.keys_sketch.inputs
        return [float(counted.get(i, 0)) for i in range(max(counted) + 1)] if counted else []

    # --- charts ---------------------------------------------------------------------------
    def chart(self) -> Any:
        """An Altair chart: partitions × load, stacked by heavy key, flagged ones outlined."""
        flagged = set(int(p) for p in self.skewed["partition"])
        rows = stacked_rows(self.partitions, self.keys, self.rules.load, flagged)
        return partitions_chart(rows, self._chart_title(), self.rules.load)

    def _chart_title(self) -> str:
        load = self.rules.load.replace("_", " ")
        return f"{self.operator}: {load} per partition ({'live' if self.live else 'final'})"

    def heatmap(self) -> Any:
        """Records in of every Python operator and JVM stage on every partition (over
        ``heatmap.MAX_COLUMNS`` partitions, a column's heaviest of several)."""
        return heatmap_chart(*self._heatmap_cells())

    def _heatmap_cells(self) -> tuple[list[dict], int]:
        """The heat map's cells (``heatmap.in_columns``) and the partitions a column spans."""
        cells = partition_cells(self.source.workers, self.source.dag) \
            + stage_cells(self.source.stage_tasks or [])
        partitions = partition_count(cells, self.source.dag)
        return in_columns(cells, partitions), column_span(partitions)

    # --- load over time ------------------------------------------------------------------
    @property
    def timeline(self) -> pd.DataFrame:
        """seconds (since the run started), partition, records (taken in so far): the
        load over time of ``timeline_operator``, each partition read at the same
        moments (a grid of at most 120 steps); live, up to the latest report."""
        return on_grid(self._timeline_series()[1])

    @property
    def timeline_operator(self) -> str:
        """Whose load ``timeline`` shows: for an aggregation, live, its map side until its
        reduce side takes in records (the stage running); final, the side that took in
        records over the longer time."""
        return (self._live_timeline_node() if self.live else self._timeline_series()[0]).name

    @property
    def timeline_note(self) -> str:
        """Why ``timeline`` is empty, if it can only be (else "")."""
        if is_frame_join(self.node):
            return NO_JOIN_TIMELINE
        if self.source.series is None:
            return self.source.series_note or NO_TIMELINE
        return ""

    def timeline_chart(self) -> Any:
        """An Altair chart of ``timeline``: the flagged and heaviest partitions by name,
        the others as their median."""
        node, _ = self._timeline_series()
        points = pd.DataFrame(self._timeline_points(), columns=["seconds", "series",
                                                                "records"])
        return timeline_chart(points, self._timeline_title(node.name))

    def _timeline_title(self, operator: str) -> str:
        return f"{operator}: records in over time ({'live' if self.live else 'final'})"

    def _timeline_series(self) -> tuple[OperatorNode, list[tuple[int, tuple]]]:
        """The node shown and its workers' (partition, series) (``timeline_operator``),
        read once a report."""
        if self._timeline is None:
            self._timeline = self._read_timeline()
        return self._timeline

    def _read_timeline(self) -> tuple[OperatorNode, list[tuple[int, tuple]]]:
        """Live, the operator once it has taken in records, else its map side (the stage
        running); final, whichever of the two took in records over the longer time."""
        if self.source.series is None or is_frame_join(self.node):
            return self.node, []
        sides = [self.node] + ([self.key_node] if self.key_node is not self.node else [])
        if self.live:
            node = self._live_timeline_node()
            return node, self._series_of(node)
        found = [(node, self._series_of(node)) for node in sides]
        spans = [(node, series) for node, series in found if _span(series) is not None]
        return max(spans, key=lambda side: _span(side[1]) or 0.0) if spans else found[0]

    def _live_timeline_node(self) -> OperatorNode:
        """The operator once its workers have taken in records, else its map side: the
        workers' live counts tell, without reading the series."""
        sides = [self.node] + ([self.key_node] if self.key_node is not self.node else [])
        for node in sides:
            if any(int(w.get("records_in") or 0) > 0 for w in self.source.workers
                   if w["operator"] == node.id):
                return node
        return self.node

    def _series_of(self, node: OperatorNode) -> list[tuple[int, tuple]]:
        keys = [worker_key(w) for w in self.source.workers if w["operator"] == node.id]
        series = self.source.series(keys) if self.source.series else {}
        return [(int(key[2]), series[key]) for key in keys if key in series]

    def _timeline_points(self, loads: dict[int, float] | None = None,
                         flagged: set[int] | None = None) -> list[dict]:
        node, series = self._timeline_series()
        g = grid(series)
        if node is not self.node:  # the map side: its own heaviest partitions named
            loads = {p: float(row[-1]) for p, row in zip(g.partitions, g.records)}
            flagged = set()
        loads = self.loads() if loads is None else loads
        if flagged is None:
            flagged = set(int(p) for p in skewed(loads, self.rules)["partition"])
        return chart_points(g, named_partitions(loads, flagged))

    def compare(self, other: SkewReport) -> Any:
        """This report's chart beside ``other``'s, with both runs' wall times."""
        return side_by_side(self.chart(), other.chart(), (self.source.wall, other.source.wall))

    def live_view(self, since: KeyCounts | None = None, every: bool = True) -> dict:
        """The rows the sidebar's live view keeps up to date (``to_json`` without the
        advice and the specs): partitions, keys, flags, the bars' stacked rows, the
        heat map's cells and the load over time's points. ``since``: the sketch's counts a moment ago (``CountsWindow``):
        the keys that rose most since are named in the bars and listed with the keys.
        ``every`` False: without the heat map's cells and the load over time (a push
        between two that read them: the sidebar draws those at most twice a second)."""
        import json

        def rows(frame: pd.DataFrame) -> list[dict]:
            return json.loads(frame.to_json(orient="records", default_handler=repr))

        partitions, keys = self.partitions, self.keys
        loads = self.loads(partitions)
        flags = skewed(loads, self.rules)
        rising = self.keys_sketch.rising(since) if since is not None else None
        flagged = set(int(p) for p in flags["partition"])
        bars = stacked_records(partitions, keys, self.rules.load, flagged, rising)
        if rising is not None and not rising.empty:  # listed too: a click on its bar
            keys = with_rising(keys, rising).sort_values("count", ascending=False,
                                                         kind="stable")
        view = {"operator": self.operator, "api": self.api, "live": self.live,
                "load": self.rules.load, "partitions": rows(partitions),
                "keys": rows(keys.assign(key=lambda f: f["key"].map(repr))),
                "error": self.error, "records": self.keys_sketch.n,
                "estimated": self.estimated, "bound": self.bound,
                "waiting_note": self.waiting_note,
                "skewed": rows(flags),
                "bars": bars, "timeline_operator": self.timeline_operator,
                "timeline_note": self.timeline_note}
        if every:
            cells, span = self._heatmap_cells()
            view.update(cells=cells, span=span,
                        timeline=self._timeline_points(loads, flagged))
        return view

    def to_json(self, view: dict | None = None) -> dict:
        """What the sidebar shows: the frames as rows and the charts' Vega-Lite specs (the
        same as ``chart()``'s and ``heatmap()``'s, their data put in cached specs);
        ``view``: this report's ``live_view()`` if already made."""
        view = dict(view or self.live_view())
        bars, cells, span = view.pop("bars"), view.pop("cells"), view.pop("span")
        points, shown = view.pop("timeline"), view.pop("timeline_operator")
        return dict(view, parameters=self.parameters,
                    advice=[a.as_dict() for a in self.advice],
                    spec=spec_with("partitions", bars, self._chart_title(), self.rules.load),
                    heatmap=heatmap_spec(cells, span),
                    timeline=spec_with("timeline", points, self._timeline_title(shown)))

    def mitigate(self, salts: int | None = None, timeout: float = 600.0) -> Any:
        """Re-run the cell with the heavy keys split over ``salts`` partitions (default:
        the operator's partitions) and merged after; returns the new Run, whose
        ``mitigation`` compares its results and wall time with this run's."""
        from .mitigate import mitigate

        return mitigate(self, salts, timeout)

    def __repr__(self) -> str:
        flagged = sorted(set(int(p) for p in self.skewed["partition"]))
        return (f"<SkewReport {self.operator!r} ({'live' if self.live else 'final'}): "
                f"{len(self.loads())} partitions, skewed {flagged}, "
                f"{len(self.keys)} heavy keys>"
                + "".join(f"\nwarning: {w}" for w in self.warnings))


def _span(series: list[tuple[int, tuple]]) -> float | None:
    """Seconds from the first to the last moment ``series`` saw records taken in (None:
    none were)."""
    moments = [t for _, (seconds, records) in series
               for t, r in zip(seconds, records) if r > 0]
    return max(moments) - min(moments) if moments else None
