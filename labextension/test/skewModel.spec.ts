import { Signal } from '@lumino/signaling';

import type { ClientState } from '../src/comm/client';
import type {
  IEventMessage,
  IRequestParams,
  IRequestResults,
  ISkewChanges,
  ISkewReport,
  RequestMethod
} from '../src/comm/protocol';
import type { IChartRows } from '../src/skew/liveRows';
import { RunsModel } from '../src/runs/model';
import { SKEW_LIVE_INTERVAL, SkewModel } from '../src/skew/model';
import { flush } from './fakeKernel';
import { oneRunReply } from './oneRun';
import { ManualClock } from './timeTravelKernel';

function report(run: string, operator: string, live: boolean, hot: number): ISkewReport {
  return {
    run,
    operator,
    operators: ['sum', 'enrich'],
    api: 'reduceByKey',
    live,
    recorded: true,
    load: 'key_records',
    partitions: [0, 1, 2].map(p => ({
      partition: p,
      records: 10,
      bytes: 100,
      seconds: 0.1,
      key_records: p === 2 ? hot : 50
    })),
    keys: [
      { key: "'hot'", count: hot, share: 0.8, partition: 2, error: 0, low: hot, high: hot, exact: true },
      { key: "'u1'", count: 20, share: 0.05, partition: 0, error: 0, low: 20, high: 20, exact: true }
    ],
    error: 3,
    records: 1000,
    estimated: 0,
    bound: '',
    waiting_note: '',
    skewed: [{ partition: 2, load: hot, rule: 'reshape', why: 'φ ≥ η' }],
    parameters: {},
    advice: [{ remedy: 'salt', why: 'split', code: 'Salt(HEAVY, 3)', heaviest: hot, after: 60, shrink: 0.5 }],
    spec: { mark: 'bar', data: { values: [{ partition: 2, load: hot }] } },
    heatmap: { mark: 'rect', data: { values: [] } },
    timeline: { mark: 'line', data: { name: 't' }, datasets: { t: [] } },
    timeline_note: ''
  };
}

/** A kernel's comm as the models see it: one finished or running run, a skew report per call. */
class FakeSource {
  state: ClientState = 'ready';
  stateChanged = new Signal<unknown, ClientState>(this);
  event = new Signal<unknown, IEventMessage>(this);
  status: 'running' | 'finished' = 'running';
  hot = 100;
  calls: IRequestParams['skew.report'][] = [];
  fail: string | null = null;
  /** Each report's reply waits this long on `clock` (a kernel busy with the run). */
  replyDelay = 0;
  clock: ManualClock | null = null;

  async request<M extends RequestMethod>(method: M, params: IRequestParams[M]): Promise<IRequestResults[M]> {
    const reply = oneRunReply(method, this.status);
    if (reply !== undefined) {
      return reply as IRequestResults[M];
    }
    switch (method) {
      case 'skew.report': {
        const p = params as IRequestParams['skew.report'];
        this.calls.push(p);
        if (this.fail) {
          throw new Error(this.fail);
        }
        const hot = this.hot;
        if (this.replyDelay > 0 && this.clock) {
          await new Promise<void>(resolve => this.clock!.setTimeout(resolve, this.replyDelay));
        }
        return report(p.run, p.operator ?? 'sum', this.status === 'running', hot) as IRequestResults[M];
      }
    }
    throw new Error(`unexpected ${method}`);
  }

  progress(): void {
    this.event.emit({
      kind: 'event',
      event: 'run.progress',
      data: { run: 'r1', status: 'running', duration: 2, progress: [] }
    });
  }
}

async function setup(): Promise<[SkewModel, FakeSource, ManualClock]> {
  const source = new FakeSource();
  const clock = new ManualClock();
  const runs = new RunsModel(source);
  const model = new SkewModel(runs, source, clock);
  await flush(30);
  return [model, source, clock];
}

describe('SkewModel', () => {
  it('fetches the selected run’s report and selects a partition’s keys', async () => {
    const [model, source] = await setup();
    expect(source.calls).toEqual([{ run: 'r1' }]);
    expect(model.report?.operator).toBe('sum');
    expect(model.partitionKeys.map(k => k.key)).toEqual(["'hot'", "'u1'"]);
    const selected: number[] = [];
    model.partitionSelected.connect((_, p) => selected.push(p));
    model.selectPartition(2);
    model.selectPartition(2);
    expect(selected).toEqual([2]);
    expect(model.partition).toBe(2);
    expect(model.partitionKeys.map(k => k.key)).toEqual(["'hot'"]);
    expect(model.partitionFlags.map(f => f.rule)).toEqual(['reshape']);
    model.selectPartition(1);
    expect(model.partitionKeys).toEqual([]);
    expect(model.partitionFlags).toEqual([]);
  });

  it('updates live on progress events, at most once per interval, and once more at the end', async () => {
    const [model, source, clock] = await setup();
    for (let i = 0; i < 20; i++) {
      source.hot = 100 + i;
      source.progress();
      clock.advance(10);
      await flush(5);
    }
    // the first progress fetched at once; the other 19 within 200 ms wait for the interval
    expect(source.calls.length).toBe(2);
    clock.advance(SKEW_LIVE_INTERVAL);
    await flush(10);
    expect(source.calls.length).toBe(3);
    expect(model.report?.partitions[2].key_records).toBe(119); // the latest counts
    // the operator the kernel chose is not pinned: its node may be renamed while it runs
    expect(source.calls.every(call => call.operator === undefined)).toBe(true);
    expect(model.report?.live).toBe(true);
    source.status = 'finished';
    source.event.emit({
      kind: 'event',
      event: 'run.status',
      data: { run: 'r1', status: 'finished', error: null, warnings: [] }
    });
    await flush(30);
    expect(model.report?.live).toBe(false);
  });

  it('shows live reports whose replies take longer than the interval, while events go on', async () => {
    const [model, source, clock] = await setup();
    source.clock = clock;
    source.replyDelay = 3 * SKEW_LIVE_INTERVAL;
    const shown: number[] = [];
    model.changed.connect(() => shown.push(model.report?.partitions[2].key_records ?? -1));
    for (let i = 0; i < 40; i++) {
      source.hot = 200 + i;
      source.progress(); // four a second, as the kernel's watcher sends them
      clock.advance(250);
      await flush(5);
    }
    // each reply is shown before the next request: one in flight at a time
    expect(shown.length).toBeGreaterThanOrEqual(5);
    expect(source.calls.length).toBeLessThanOrEqual(shown.length + 2);
    expect(model.report?.live).toBe(true);
    expect(model.report?.partitions[2].key_records).toBeGreaterThan(230); // recent counts
  });

  it('asks for another operator, and shows a failed request’s message', async () => {
    const [model, source] = await setup();
    model.selectPartition(2);
    await model.setOperator('enrich');
    expect(source.calls[source.calls.length - 1]).toEqual({ run: 'r1', operator: 'enrich' });
    expect(model.report?.operator).toBe('enrich');
    expect(model.partition).toBeNull();
    source.fail = "no operator 'gone' in this run";
    await model.setOperator('gone');
    expect(model.error).toBe("no operator 'gone' in this run");
    expect(model.report?.operator).toBe('enrich'); // the last report stays
  });

  it('takes the kernel’s pushed report, then only the changed rows, and fetches no more on progress', async () => {
    const [model, source] = await setup();
    const pushed = report('r1', 'sum', true, 300);
    pushed.spec = { mark: 'bar', data: { name: 'd' }, datasets: { d: [bar(0, 'other', 5), bar(2, "'hot'", 300)] } };
    pushed.heatmap = { mark: 'rect', data: { name: 'h' }, datasets: { h: [cell('sum', 0, 5), cell('sum', 2, 9)] } };
    const push = (data: { report: ISkewReport | null; changes: ISkewChanges | null }) =>
      source.event.emit({
        kind: 'event',
        event: 'skew.changed',
        data: { run: 'r1', operator: 'sum', since: null, ...data }
      });
    const rows: IChartRows[] = [];
    model.chartRows.connect((_, r) => rows.push(r));
    push({ report: pushed, changes: null });
    expect(model.report).toBe(pushed);
    const calls = source.calls.length;
    push({
      report: null,
      changes: {
        partitions: [{ partition: 2, records: 10, bytes: 100, seconds: 0.1, key_records: 400 }],
        removed_partitions: [],
        bars: [bar(2, "'hot'", 400), bar(1, "'late'", 7)],
        removed_bars: [[0, 'other']],
        cells: [],
        removed_cells: [],
        timeline: [],
        removed_timeline: [],
        records: 1200
      }
    });
    source.progress();
    await flush(10);
    expect(source.calls.length).toBe(calls); // pushed: nothing fetched on progress
    expect(model.report?.partitions.map(p => p.key_records)).toEqual([50, 50, 400]);
    expect(model.report?.records).toBe(1200);
    expect(model.report?.keys).toEqual(pushed.keys); // not in the change: kept
    expect((model.report?.spec as { datasets: { d: unknown[] } }).datasets.d).toEqual([
      bar(2, "'hot'", 400),
      bar(1, "'late'", 7)
    ]);
    expect(rows).toHaveLength(1); // the heat map's cells did not change
    expect(rows[0].kind).toBe('spec');
    expect([...rows[0].remove].sort()).toEqual(['0\u0000other', "1\u0000'late'", "2\u0000'hot'"]);
    expect(rows[0].insert).toEqual([bar(2, "'hot'", 400), bar(1, "'late'", 7)]);
    // another operator's push is not this view's: it keeps the one picked
    await model.setOperator('enrich');
    source.event.emit({
      kind: 'event',
      event: 'skew.changed',
      data: { run: 'r1', operator: 'sum', report: pushed, changes: null, since: null }
    });
    expect(model.report?.operator).toBe('enrich');
  });
});

function bar(partition: number, segment: string, load: number) {
  return { partition, segment, load, skewed: false };
}

function cell(operator: string, partition: number, records_in: number) {
  return { operator, partition, records_in, seconds: 0 };
}
