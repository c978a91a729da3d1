import { IcedteaClient } from '../src/comm/client';
import { RunsModel } from '../src/runs/model';
import type { IRequestMessage, IRunListItem, IRunSummary } from '../src/comm/protocol';
import { FakeComm, FakeKernel, flush, later } from './fakeKernel';

function item(id: string, started: number, status: IRunListItem['status'] = 'finished'): IRunListItem {
  return {
    id,
    status,
    started,
    ended: started + 5,
    duration: 5,
    cell: `df_${id} = spark.range(10)`,
    path: `/runs/${id}`,
    operators: 2
  };
}

function summary(run: IRunListItem): IRunSummary {
  return {
    ...run,
    cell: `%%icedtea\n${run.cell}`,
    dag: {
      operators: [
        { id: 0, name: 'parse', kind: 'python', api: 'rdd.map', parents: [], phase: '', named: false },
        { id: 1, name: 'keep', kind: 'python', api: 'rdd.filter', parents: [0], phase: '', named: false }
      ],
      edges: [['parse', 'keep']],
      stages: {}
    },
    progress: [
      {
        operator: 'parse',
        phase: '',
        records_in: 10,
        records_out: 10,
        done: 2,
        running: 0,
        failed: 0,
        rate: 0,
        average_rate: 5
      },
      {
        operator: 'keep',
        phase: '',
        records_in: 10,
        records_out: 4,
        done: 2,
        running: 0,
        failed: 0,
        rate: 0,
        average_rate: 5
      }
    ],
    error: null,
    warnings: [],
    alerts: []
  };
}

/** A kernel with the extension loaded and some runs, answering like handlers.py. */
class IcedteaKernel extends FakeKernel {
  runs: IRunListItem[] = [];
  requests: IRequestMessage[] = [];
  failGet = false;

  constructor() {
    super();
    this.handler = (request, comm) => this.serve(request, comm);
  }

  serve(request: IRequestMessage, comm: FakeComm): void {
    this.requests.push(request);
    const ok = (result: unknown) => later(() => comm.push({ kind: 'reply', id: request.id, ok: true, result }));
    const params = request.params as { run?: string; operator?: string };
    switch (request.method) {
      case 'runs.list':
        return ok({ runs: this.runs });
      case 'run.get': {
        const run = this.runs.find(r => r.id === params.run);
        if (!run || this.failGet) {
          return later(() =>
            comm.push({
              kind: 'reply',
              id: request.id,
              ok: false,
              error: { type: 'not_found', message: `no run ${params.run}` }
            })
          );
        }
        return ok(summary(run));
      }
      case 'run.partitions':
        return ok({
          run: params.run,
          operator: params.operator,
          partitions: [
            {
              operator: 0,
              partition: 0,
              stage: 1,
              attempt: 0,
              task: 3,
              status: 'ok',
              records_in: 5,
              records_out: 5,
              rate: 0
            }
          ]
        });
    }
  }

  event(event: string, data: unknown): void {
    this.comm.push({ kind: 'event', event, data });
  }
}

async function setup(runs: IRunListItem[]): Promise<[RunsModel, IcedteaKernel, IcedteaClient]> {
  const kernel = new IcedteaKernel();
  kernel.runs = runs;
  const client = new IcedteaClient({ helloTimeout: 500, requestTimeout: 500 });
  const model = new RunsModel(client);
  client.setKernel(kernel.asKernel);
  await flush(30);
  return [model, kernel, client];
}

describe('RunsModel', () => {
  it('loads the runs when the comm is ready and selects the newest', async () => {
    const [model, kernel] = await setup([item('a', 100), item('c', 300), item('b', 200)]);
    expect(model.state).toBe('ready');
    expect(model.runs.map(r => r.id)).toEqual(['c', 'b', 'a']);
    expect(model.selectedId).toBe('c');
    expect(model.selected?.id).toBe('c');
    expect(model.selected?.progress.map(p => p.operator)).toEqual(['parse', 'keep']);
    expect(kernel.requests.map(r => r.method)).toEqual(['runs.list', 'run.get']);
  });

  it('adds a run from run.added and selects it', async () => {
    const [model, kernel] = await setup([item('a', 100)]);
    const changes = jest.fn();
    model.changed.connect(changes);
    const added = item('b', 200, 'running');
    kernel.runs.push(added);
    kernel.event('run.added', { run: added });
    expect(model.runs.map(r => r.id)).toEqual(['b', 'a']);
    await flush(30);
    expect(model.selectedId).toBe('b');
    expect(model.selected?.status).toBe('running');
    expect(changes).toHaveBeenCalled();
  });

  it('updates the list and the selected run from run.progress', async () => {
    const [model, kernel] = await setup([item('a', 100, 'running')]);
    const progress = [
      { operator: 'parse', phase: '', records_in: 500, records_out: 480, done: 1, running: 1, failed: 0, rate: 250 }
    ];
    kernel.event('run.progress', { run: 'a', status: 'running', duration: 7.5, progress });
    expect(model.runs[0].duration).toBe(7.5);
    expect(model.selected?.duration).toBe(7.5);
    expect(model.selected?.progress).toEqual(progress);
    // Progress of another run leaves the selected summary alone.
    kernel.event('run.progress', { run: 'zzz', status: 'running', duration: 1, progress: [] });
    expect(model.selected?.progress).toEqual(progress);
  });

  it('applies run.status (error, warnings) and refreshes the list', async () => {
    const [model, kernel] = await setup([item('a', 100, 'running')]);
    const error = {
      operator: 'parse',
      partition: 3,
      exception: 'ValueError',
      message: 'bad',
      traceback: 'tb',
      record: { repr: "'x'" }
    };
    kernel.runs = [{ ...kernel.runs[0], status: 'failed' }];
    kernel.requests = [];
    kernel.event('run.status', { run: 'a', status: 'failed', error, warnings: ['slow partition 3'] });
    expect(model.runs[0].status).toBe('failed');
    expect(model.selected?.status).toBe('failed');
    expect(model.selected?.error).toEqual(error);
    expect(model.selected?.warnings).toEqual(['slow partition 3']);
    await flush(30);
    expect(kernel.requests.map(r => r.method)).toEqual(['runs.list', 'run.get']);
  });

  it('appends alerts of the selected run', async () => {
    const [model, kernel] = await setup([item('a', 100, 'running')]);
    kernel.event('run.alert', { run: 'a', alert: { agent: 'skew', message: 'partition 3 is slow' } });
    expect(model.selected?.alerts).toEqual([{ agent: 'skew', message: 'partition 3 is slow' }]);
  });

  it('keeps a run the user selected when a new run starts', async () => {
    const [model, kernel] = await setup([item('a', 100), item('b', 200)]);
    await model.select('a');
    expect(model.selected?.id).toBe('a');
    const added = item('c', 300, 'running');
    kernel.runs.push(added);
    kernel.event('run.added', { run: added });
    await flush(30);
    expect(model.selectedId).toBe('a');
    // Selecting the newest again follows new runs.
    await model.select('c');
    const next = item('d', 400, 'running');
    kernel.runs.push(next);
    kernel.event('run.added', { run: next });
    await flush(30);
    expect(model.selectedId).toBe('d');
  });

  it('fetches the partitions of an operator of the selected run', async () => {
    const [model, kernel] = await setup([item('a', 100)]);
    const rows = await model.partitions('parse');
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ partition: 0, status: 'ok', records_in: 5 });
    const request = kernel.requests[kernel.requests.length - 1];
    expect(request).toMatchObject({ method: 'run.partitions', params: { run: 'a', operator: 'parse' } });
  });

  it('reports a failed request', async () => {
    const [model, kernel] = await setup([item('a', 100), item('b', 50)]);
    kernel.failGet = true;
    await model.select('b');
    expect(model.lastError).toBe('no run b');
    expect(model.selected).toBeNull();
  });

  it('clears everything when the comm goes away and reloads after a restart', async () => {
    const [model, kernel] = await setup([item('a', 100)]);
    kernel.setStatus('restarting');
    expect(model.state).toBe('connecting');
    expect(model.runs).toEqual([]);
    expect(model.selected).toBeNull();
    kernel.runs = [item('z', 900)];
    kernel.setStatus('idle');
    await flush(30);
    expect(model.state).toBe('ready');
    expect(model.runs.map(r => r.id)).toEqual(['z']);
    expect(model.selected?.id).toBe('z');
  });

  it('is empty and unavailable when the extension is not loaded', async () => {
    const kernel = new IcedteaKernel();
    kernel.targetRegistered = false;
    const client = new IcedteaClient({ helloTimeout: 500 });
    const model = new RunsModel(client);
    client.setKernel(kernel.asKernel);
    await flush(30);
    expect(model.state).toBe('unavailable');
    expect(model.runs).toEqual([]);
  });
});

describe('RunsModel and the DAG of a running run', () => {
  it('fetches the summary again when progress names operators its DAG lacks', async () => {
    const [model, kernel] = await setup([item('a', 100, 'running')]);
    expect(model.selected?.dag.operators.map(op => op.name)).toEqual(['parse', 'keep']);
    // The list item counted the operators from the summary.
    expect(model.runs[0].operators).toBe(2);
    kernel.requests = [];
    const progress = [
      { operator: 'later', phase: '', records_in: 1, records_out: 1, done: 0, running: 1, failed: 0, rate: 1 }
    ];
    kernel.event('run.progress', { run: 'a', status: 'running', duration: 2, progress });
    kernel.event('run.progress', { run: 'a', status: 'running', duration: 2.1, progress });
    await flush(30);
    // Once, not per event.
    expect(kernel.requests.map(r => r.method)).toEqual(['run.get']);
  });
});
