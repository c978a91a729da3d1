import type { ISkewChanges, ISkewPoint, ISkewReport } from '../src/comm/protocol';
import { applyChanges, pointId } from '../src/skew/liveRows';
import { splitData } from '../src/skew/specData';

function point(series: string, seconds: number, records: number): ISkewPoint {
  return { seconds, series, records };
}

function chart(name: string, mark: string, values: unknown[]): unknown {
  return { mark, data: { name }, datasets: { [name]: values } };
}

/** A live report whose load over time has two series on a grid of two times. */
function liveReport(): ISkewReport {
  return {
    run: 'r1',
    operator: 'sum',
    operators: ['sum'],
    api: 'reduceByKey',
    live: true,
    recorded: true,
    load: 'key_records',
    partitions: [],
    keys: [],
    error: 0,
    records: 0,
    estimated: 0,
    bound: '',
    waiting_note: '',
    skewed: [],
    parameters: {},
    advice: [],
    spec: chart('bars', 'bar', [{ partition: 0, segment: 'other', load: 5, skewed: false }]),
    heatmap: chart('cells', 'rect', []),
    timeline: chart('points', 'line', [
      point('partition 3', 0, 0),
      point('partition 3', 1, 40),
      point('other partitions (median)', 0, 0),
      point('other partitions (median)', 1, 10)
    ]),
    timeline_note: ''
  };
}

function noChanges(): ISkewChanges {
  return {
    partitions: [],
    removed_partitions: [],
    bars: [],
    removed_bars: [],
    cells: [],
    removed_cells: [],
    timeline: [],
    removed_timeline: []
  };
}

function timelineValues(report: ISkewReport): unknown[] {
  return splitData(report.timeline)!.values;
}

describe('pointId', () => {
  it('tells points apart by series and time, not by their records', () => {
    expect(pointId(point('partition 3', 1.5, 7))).toBe(pointId(point('partition 3', 1.5, 99)));
    expect(pointId(point('partition 3', 1.5, 7))).not.toBe(pointId(point('partition 3', 2, 7)));
    expect(pointId(point('partition 3', 1.5, 7))).not.toBe(pointId(point('partition 13', 1.5, 7)));
  });
});

describe('applyChanges on the load over time', () => {
  it('replaces a changed point in place, drops a removed one, appends a new one', () => {
    const report = liveReport();
    const spec = report.timeline;
    const changes: ISkewChanges = {
      ...noChanges(),
      timeline: [point('partition 3', 1, 55), point('partition 3', 2, 90)],
      removed_timeline: [['other partitions (median)', 0]]
    };

    const [next, charts] = applyChanges(report, changes);

    expect(next.timeline).toBe(spec); // the same spec object, its dataset brought up to date
    expect(timelineValues(next)).toEqual([
      point('partition 3', 0, 0),
      point('partition 3', 1, 55),
      point('other partitions (median)', 1, 10),
      point('partition 3', 2, 90)
    ]);
    expect(charts).toHaveLength(1);
    expect(charts[0].kind).toBe('timeline');
    expect([...charts[0].remove].sort()).toEqual(
      [
        pointId(point('other partitions (median)', 0, 0)),
        pointId(point('partition 3', 1, 0)),
        pointId(point('partition 3', 2, 0))
      ].sort()
    );
    expect(charts[0].insert).toEqual([point('partition 3', 1, 55), point('partition 3', 2, 90)]);
  });

  it('fills the empty dataset of a run just started', () => {
    const report = { ...liveReport(), timeline: chart('empty', 'line', []) };
    const [next, charts] = applyChanges(report, { ...noChanges(), timeline: [point('partition 0', 0.5, 3)] });
    expect(timelineValues(next)).toEqual([point('partition 0', 0.5, 3)]);
    expect(charts.map(rows => rows.kind)).toEqual(['timeline']);
  });

  it('emits no timeline rows for a change without points, and keeps the note unless it changes', () => {
    const report = { ...liveReport(), timeline_note: 'no partition has taken in records yet' };
    const before = JSON.stringify(timelineValues(report));
    const [next, charts] = applyChanges(report, {
      ...noChanges(),
      bars: [{ partition: 0, segment: 'other', load: 8, skewed: false }]
    });
    expect(charts.map(rows => rows.kind)).toEqual(['spec']);
    expect(JSON.stringify(timelineValues(next))).toBe(before);
    expect(next.timeline_note).toBe('no partition has taken in records yet');

    const [cleared, none] = applyChanges(next, { ...noChanges(), timeline_note: '' });
    expect(none).toEqual([]);
    expect(cleared.timeline_note).toBe('');
  });
});
