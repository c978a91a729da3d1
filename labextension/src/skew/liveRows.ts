import type { ISkewBar, ISkewCell, ISkewChanges, ISkewPartition, ISkewPoint, ISkewReport } from '../comm/protocol';
import { ChartKind, splitData } from './specData';

/** The rows of one chart that a `skew.changed` event put or took away, by identity. */
export interface IChartRows {
  kind: ChartKind;
  /** The identities (`barId`, `cellId`, `pointId`) of the rows to take out of the drawn view. */
  remove: Set<string>;
  /** The rows to put in (a changed row is taken out by its identity and put in again). */
  insert: unknown[];
}

/** A bar's identity: its partition and key segment. */
export function barId(bar: ISkewBar): string {
  return `${bar.partition}\u0000${bar.segment}`;
}

/** A heat map cell's identity: its operator and partition. */
export function cellId(cell: ISkewCell): string {
  return `${cell.operator}\u0000${cell.partition}`;
}

/** A load over time point's identity: its series and time. */
export function pointId(point: ISkewPoint): string {
  return `${point.series}\u0000${point.seconds}`;
}

/** `rows` with those identified in `removed` or in `put` replaced by `put` (in place of
 * the old row, new ones at the end). */
function merged<T>(rows: T[], put: T[], removed: string[], id: (row: T) => string): T[] {
  const gone = new Set(removed);
  const byId = new Map(put.map(row => [id(row), row]));
  const out: T[] = [];
  for (const row of rows) {
    const key = id(row);
    if (gone.has(key)) {
      continue;
    }
    const changed = byId.get(key);
    out.push(changed ?? row);
    byId.delete(key);
  }
  return out.concat([...byId.values()]);
}

/** One chart's dataset brought up to date in its spec (in place: a redraw uses it), and
 * what the drawn view must change; null when the spec has no one dataset. */
function chartRows<T>(
  report: ISkewReport,
  kind: ChartKind,
  put: T[],
  removed: string[],
  id: (row: T) => string
): IChartRows | null {
  const parts = splitData(report[kind]);
  if (parts === null) {
    return null;
  }
  const values = merged(parts.values as T[], put, removed, id);
  (report[kind] as { datasets: { [name: string]: unknown[] } }).datasets[parts.name] = values;
  return { kind, remove: new Set([...removed, ...put.map(id)]), insert: put };
}

/**
 * `report` (a live one) with `changes` applied: a new report object whose charts' specs
 * are the same objects, their datasets updated; and the rows each drawn chart changes.
 */
export function applyChanges(report: ISkewReport, changes: ISkewChanges): [ISkewReport, IChartRows[]] {
  const partitions = merged<ISkewPartition>(
    report.partitions,
    changes.partitions,
    changes.removed_partitions.map(String),
    p => String(p.partition)
  );
  const next: ISkewReport = {
    ...report,
    partitions,
    keys: changes.keys ?? report.keys,
    skewed: changes.skewed ?? report.skewed,
    error: changes.error ?? report.error,
    records: changes.records ?? report.records,
    estimated: changes.estimated ?? report.estimated,
    bound: changes.bound ?? report.bound,
    waiting_note: changes.waiting_note ?? report.waiting_note,
    timeline_note: changes.timeline_note ?? report.timeline_note
  };
  const removedBars = changes.removed_bars.map(([partition, segment]) => barId({ partition, segment } as ISkewBar));
  const removedCells = changes.removed_cells.map(([operator, partition]) =>
    cellId({ operator, partition } as ISkewCell)
  );
  const removedPoints = changes.removed_timeline.map(([series, seconds]) => pointId({ series, seconds } as ISkewPoint));
  const charts = [
    chartRows(next, 'spec', changes.bars, removedBars, barId),
    chartRows(next, 'heatmap', changes.cells, removedCells, cellId),
    chartRows(next, 'timeline', changes.timeline, removedPoints, pointId)
  ].filter((rows): rows is IChartRows => rows !== null && (rows.remove.size > 0 || rows.insert.length > 0));
  return [next, charts];
}

/** What pushed rows change in a drawn Vega view. */
export interface IRowChange {
  /** Drawn rows taken away. */
  remove: object[];
  /** Rows new to the view. */
  insert: object[];
  /** Fields of drawn rows that changed: (the drawn row, field, new value). */
  modify: [object, string, unknown][];
}

/**
 * Pushed rows (`remove`d identities, `insert`ed rows by identity) against the view's
 * rows by identity, `drawn` (kept up to date here): a row already drawn has its changed
 * fields modified in place, so Vega keeps its mark and only re-encodes it (taking it out
 * and putting a new one in rebuilt the marks: long frames at 2,400 heat map cells).
 */
export function rowChange(drawn: Map<string, object>, remove: Set<string>, insert: Map<string, unknown>): IRowChange {
  const change: IRowChange = { remove: [], insert: [], modify: [] };
  remove.forEach(key => {
    const row = drawn.get(key);
    if (row !== undefined && !insert.has(key)) {
      change.remove.push(row);
      drawn.delete(key);
    }
  });
  insert.forEach((row, key) => {
    const old = drawn.get(key) as { [field: string]: unknown } | undefined;
    if (old === undefined) {
      change.insert.push(row as object);
      drawn.set(key, row as object);
      return;
    }
    Object.entries(row as object).forEach(([field, value]) => {
      if (old[field] !== value) {
        change.modify.push([old, field, value]);
      }
    });
  });
  return change;
}
