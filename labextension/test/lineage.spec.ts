import { IcedteaClient } from '../src/comm/client';
import type { ILineageRecord, ILineageTrace, IRequestMessage } from '../src/comm/protocol';
import { LineageModel, sameRecord } from '../src/lineage/lineageModel';
import { RunsModel } from '../src/runs/model';
import { TimeTravelModel } from '../src/timetravel/timeTravel';
import { FakeComm, flush, later } from './fakeKernel';
import { TimeTravelKernel, tuple } from './timeTravelKernel';

const OUTPUTS: ILineageRecord[] = Array.from({ length: 45 }, (_, i) => ({
  operator: 'count',
  partition: i % 2,
  position: Math.floor(i / 2),
  record: tuple(i === 7 ? 'zzrare' : `w${i}`, i === 7 ? 1 : i + 2)
}));
const SOURCES: ILineageRecord[] = [
  { operator: 'lines', partition: 0, position: 3, record: 'a zzrare b' },
  { operator: 'lines', partition: 1, position: 0, record: 'zzrare again' }
];

/** The time-travel kernel, answering the lineage requests too (like comm/lineage.py). */
class LineageKernel extends TimeTravelKernel {
  noLineage = false;
  traces = 0;

  serve(request: IRequestMessage, comm: FakeComm): void {
    const p = request.params as { [key: string]: unknown };
    const ok = (result: unknown) => later(() => comm.push({ kind: 'reply', id: request.id, ok: true, result }));
    const page = (rows: ILineageRecord[], start = 0, size = 20, operator: string | null = null) => ({
      operator,
      total: rows.length,
      start,
      rows: rows.slice(start, start + size)
    });
    switch (request.method) {
      case 'lineage.outputs': {
        this.requests.push(request);
        if (this.noLineage) {
          const error = {
            type: 'no_lineage',
            message: 'run r1 has no lineage: run the cell again with %%icedtea --lineage'
          };
          return later(() => comm.push({ kind: 'reply', id: request.id, ok: false, error }));
        }
        const filter = String(p.filter ?? '');
        const rows = OUTPUTS.filter(r => JSON.stringify(r.record).includes(filter));
        return ok({ run: 'r1', operator: 'count', page: page(rows, p.start as number, p.size as number) });
      }
      case 'lineage.trace_back':
      case 'lineage.trace_forward': {
        this.requests.push(request);
        const back = request.method === 'lineage.trace_back';
        const from = back
          ? OUTPUTS.find(r => r.partition === p.partition && r.position === p.position)!
          : SOURCES.find(r => r.partition === p.partition && r.position === p.position)!;
        const ends = back ? SOURCES : [OUTPUTS[7]];
        const trace: ILineageTrace = {
          run: 'r1',
          trace: ++this.traces,
          direction: back ? 'back' : 'forward',
          engine: 'duckdb',
          from,
          call: back ? `run.trace_back(at=(${p.partition}, ${p.position}))` : 'run.trace_forward(...)',
          operators: [
            { operator: 'lines', count: back ? 2 : 1 },
            { operator: 'split', count: 2 },
            { operator: 'count', count: 1 }
          ],
          total: ends.length,
          notes: [],
          page: page(ends, 0, p.size as number)
        };
        return ok(trace);
      }
      case 'lineage.records':
        this.requests.push(request);
        return ok({ run: 'r1', trace: p.trace, page: page(SOURCES, p.start as number, p.size as number, null) });
      case 'debug.jump_to':
        this.requests.push(request);
        this.jumped = true;
        this.position = 1;
        return ok(this.view(`step over on partition ${p.partition}`, null, [], p.partition as number));
    }
    super.serve(request, comm);
  }
}

async function setup(configure: (kernel: LineageKernel) => void = () => undefined) {
  const kernel = new LineageKernel();
  configure(kernel);
  const client = new IcedteaClient({ helloTimeout: 500, requestTimeout: 500 });
  const runs = new RunsModel(client);
  const tt = new TimeTravelModel(runs, client);
  const lineage = new LineageModel(runs, client, tt.debug);
  client.setKernel(kernel.asKernel);
  await flush(60);
  return { kernel, runs, tt, lineage };
}

const asked = (kernel: TimeTravelKernel, method: string) => kernel.requests.filter(r => r.method === method);

describe('LineageModel', () => {
  it('loads no output rows until the view is shown, then the first page', async () => {
    const { kernel, lineage } = await setup();
    expect(lineage.available).toBe(true);
    expect(asked(kernel, 'lineage.outputs')).toHaveLength(0);
    lineage.show();
    await flush(40);
    expect(asked(kernel, 'lineage.outputs')[0].params).toEqual({ run: 'r1', start: 0, size: 20 });
    expect(lineage.outputs?.operator).toBe('count');
    expect(lineage.outputs?.page.total).toBe(45);
    expect(lineage.outputs?.page.rows).toHaveLength(20);
    lineage.show(); // once per run
    await flush(40);
    expect(asked(kernel, 'lineage.outputs')).toHaveLength(1);
  });

  it('pages and filters the output rows', async () => {
    const { kernel, lineage } = await setup();
    lineage.show();
    await flush(40);
    await lineage.loadOutputs(40);
    expect(lineage.outputs?.page.start).toBe(40);
    expect(lineage.outputs?.page.rows).toHaveLength(5);
    await lineage.setFilter('zzrare');
    expect(asked(kernel, 'lineage.outputs').pop()?.params).toEqual({ run: 'r1', start: 0, size: 20, filter: 'zzrare' });
    expect(lineage.filter).toBe('zzrare');
    expect(lineage.outputs?.page.rows.map(r => r.position)).toEqual([3]);
  });

  it('traces a row back, then a source record forward, and pages the trace', async () => {
    const { kernel, lineage } = await setup();
    lineage.show();
    await flush(40);
    await lineage.traceBack(OUTPUTS[7]);
    expect(asked(kernel, 'lineage.trace_back')[0].params).toEqual({
      run: 'r1',
      partition: 1,
      position: 3,
      size: 20,
      source: 'sidebar'
    });
    expect(sameRecord(lineage.row, OUTPUTS[7])).toBe(true);
    expect(lineage.back?.trace.operators.map(o => o.count)).toEqual([2, 2, 1]);
    expect(lineage.back?.page.rows).toEqual(SOURCES);
    await lineage.traceForward(SOURCES[0]);
    expect(asked(kernel, 'lineage.trace_forward')[0].params).toEqual({
      run: 'r1',
      operator: 'lines',
      partition: 0,
      position: 3,
      size: 20,
      source: 'sidebar'
    });
    expect(lineage.forward?.trace.from).toEqual(SOURCES[0]);
    expect(lineage.forward?.page.rows).toEqual([OUTPUTS[7]]);
    // Another page of the backward trace: it keeps its trace id.
    await lineage.showRecords('back', 1);
    expect(asked(kernel, 'lineage.records')[0].params).toEqual({ run: 'r1', trace: 1, start: 1, size: 20 });
    expect(lineage.back?.page.start).toBe(1);
    // A new backward trace drops the forward one: it followed the old trace's records.
    await lineage.traceBack(OUTPUTS[0]);
    expect(lineage.forward).toBeNull();
    expect(lineage.back?.trace.trace).toBe(3);
  });

  it('jumps the debugger to a traced record through debug.jump_to', async () => {
    const { kernel, lineage, tt } = await setup();
    await lineage.traceBack(OUTPUTS[7]);
    await lineage.jumpTo('back', SOURCES[1]);
    expect(asked(kernel, 'debug.jump_to')[0].params).toEqual({
      run: 'r1',
      trace: 1,
      operator: 'lines',
      partition: 1,
      position: 0,
      source: 'sidebar'
    });
    expect(sameRecord(lineage.jumped, SOURCES[1])).toBe(true);
    expect(tt.debug.view?.step).toBe('step over on partition 1');
    expect(tt.debug.error).toBeNull();
  });

  it('shows why a run without --lineage has no traces', async () => {
    const { lineage } = await setup(k => (k.noLineage = true));
    lineage.show();
    await flush(40);
    expect(lineage.outputs).toBeNull();
    expect(lineage.error?.type).toBe('no_lineage');
    expect(lineage.error?.message).toContain('%%icedtea --lineage');
    expect(lineage.busy).toBeNull();
  });

  it('waits for a running run to end, then loads the rows the open view wants', async () => {
    const { kernel, lineage } = await setup(k => (k.status_ = 'running'));
    lineage.show();
    await flush(40);
    expect(lineage.available).toBe(false);
    expect(asked(kernel, 'lineage.outputs')).toHaveLength(0);
    kernel.status_ = 'finished';
    kernel.event('run.status', { run: 'r1', status: 'finished', error: null, warnings: [] });
    await flush(60);
    expect(asked(kernel, 'lineage.outputs')).toHaveLength(1);
    expect(lineage.outputs?.page.total).toBe(45);
  });
});
