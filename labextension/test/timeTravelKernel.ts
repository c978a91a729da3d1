/**
 * A fake kernel with one recorded run of the fraud pipeline, answering the time-travel
 * requests like `icedtea_jupyter/comm/time_travel.py` (per the message contract):
 * interactions, recorded snapshots and states, and a small debugger (jump, steps with
 * overlap refusal) on partition 0.
 */
import { IcedteaClient } from '../src/comm/client';
import { RunsModel } from '../src/runs/model';
import type {
  IDebugView,
  IInteraction,
  IReplayProgress,
  IRequestMessage,
  IRunListItem,
  IRunSummary,
  Tagged
} from '../src/comm/protocol';
import { TimeTravelModel } from '../src/timetravel/timeTravel';
import type { IClock } from '../src/comm/throttle';
import { FakeComm, FakeKernel, flush, later } from './fakeKernel';

export const row = (customer: string, amount: number, currency = '$'): Tagged => ({
  $t: 'row',
  v: { customer, amount, currency }
});
export const tuple = (...v: unknown[]): Tagged => ({ $t: 'tuple', v });

export function interaction(
  index: number,
  trigger: string,
  time: number,
  complete = true,
  record: Tagged | null = null
): IInteraction {
  return { index, time, trigger, complete, latency: complete ? 0.012 : null, record };
}

export class TimeTravelKernel extends FakeKernel {
  status_: IRunListItem['status'] = 'finished';
  requests: IRequestMessage[] = [];
  interactions: IInteraction[] = [
    interaction(0, 'initial', 100),
    interaction(1, 'condition', 101, true, row('Alice', 60)),
    interaction(2, 'condition', 102, true, row('Bob', 5000, '¥'))
  ];
  /** Replies held back: request id -> send it. */
  held = new Map<number, () => void>();
  holdMethods = new Set<string>();

  // The debugger of partition 0: θ's inputs and what waits downstream.
  jumped = false;
  inputs: Tagged[] = [row('Chris', 10), row('Bob', 5000, '¥'), row('Dana', 95)];
  position = 0;
  atDetect: Tagged[] = [];
  frauds = 0;
  blacklist: string[] = [];
  /** What `debug.progress` answers: the preparation of time travel after the run. */
  replayProgress: IReplayProgress | null = { state: 'ready', done: 3, of: 3 };

  constructor() {
    super();
    this.handler = (request, comm) => this.serve(request, comm);
  }

  get item(): IRunListItem {
    return {
      id: 'r1',
      status: this.status_,
      started: 99,
      ended: this.status_ === 'running' ? null : 103,
      duration: 4,
      cell: '%%icedtea',
      path: '/runs/r1',
      operators: 3
    };
  }

  summary(): IRunSummary {
    const op = (id: number, name: string, theta: boolean, in_g: boolean) => ({
      id,
      name,
      kind: 'python',
      api: 'mapPartitions',
      parents: id ? [id - 1] : [],
      phase: '',
      named: true,
      theta,
      in_g
    });
    return {
      ...this.item,
      cell: '%%icedtea --interesting enrich',
      dag: {
        operators: [op(0, 'enrich', true, true), op(1, 'detect', false, true), op(2, 'filter', false, true)],
        edges: [],
        stages: {}
      },
      progress: [],
      error: null,
      warnings: [],
      alerts: []
    };
  }

  view(
    step: string,
    index: number | null,
    outputs: Tagged[] = [],
    partition: number | null = null,
    operator: string | null = null
  ): IDebugView {
    const waitingDetect = this.atDetect.length;
    return {
      run: 'r1',
      index,
      step,
      partition,
      operator,
      chain: ['enrich', 'detect', 'filter'],
      workers: [
        { operator: 'enrich', partition: 0, count: this.position },
        { operator: 'detect', partition: 0, count: this.position - waitingDetect },
        { operator: 'filter', partition: 0, count: this.position - waitingDetect },
        { operator: 'enrich', partition: 1, count: 2 },
        { operator: 'detect', partition: 1, count: 2 },
        { operator: 'filter', partition: 1, count: 2 }
      ],
      pending: {
        '0': {
          enrich: { count: this.inputs.length - this.position, records: this.inputs.slice(this.position), scopes: [] },
          detect: { count: waitingDetect, records: this.atDetect, scopes: waitingDetect ? [this.position - 1] : [] },
          filter: { count: 0, records: [], scopes: [] }
        },
        '1': {
          enrich: { count: 0, records: [], scopes: [] },
          detect: { count: 0, records: [], scopes: [] },
          filter: { count: 0, records: [], scopes: [] }
        }
      },
      options: {
        step_over: waitingDetect ? 0 : 1,
        step_into: 1 + (waitingDetect ? 1 : 0),
        refused: waitingDetect
          ? {
              '0': `1 record(s) of the scope of θ's input #${this.position - 1} still wait at 'detect'; step_out first`
            }
          : {},
        ended: [1]
      },
      outputs,
      notes: []
    };
  }

  serve(request: IRequestMessage, comm: FakeComm): void {
    this.requests.push(request);
    const send = (message: unknown) => {
      if (this.holdMethods.has(request.method)) {
        this.held.set(request.id, () => comm.push(message));
      } else {
        later(() => comm.push(message));
      }
    };
    const ok = (result: unknown) => send({ kind: 'reply', id: request.id, ok: true, result });
    const fail = (type: string, message: string) =>
      send({ kind: 'reply', id: request.id, ok: false, error: { type, message } });
    const p = request.params as { index: number; partition: number; operator: string };
    switch (request.method) {
      case 'runs.list':
        return ok({ runs: [this.item] });
      case 'run.get':
        return ok(this.summary());
      case 'run.actions':
        return ok({ run: 'r1', actions: [] });
      case 'run.interactions':
        return ok({ run: 'r1', interactions: this.interactions });
      case 'run.interact': {
        if (this.status_ !== 'running') {
          return fail('bad_request', 'run r1 is finished');
        }
        const next = interaction(this.interactions.length, 'manual', 105);
        this.interactions.push(next);
        return ok({ run: 'r1', interaction: next });
      }
      case 'run.snapshot':
        return ok({
          run: 'r1',
          index: p.index,
          trigger: 'condition',
          workers: [0, 1].flatMap(partition =>
            ['enrich', 'detect', 'filter'].map(operator => ({ operator, partition, status: 'running', count: p.index }))
          )
        });
      case 'run.state':
        return ok({
          state:
            p.operator === 'enrich'
              ? { highest: { Alice: 60 * p.index } }
              : p.operator === 'detect'
                ? { blacklist: { $t: 'set', v: [] }, checked: p.index }
                : { frauds: 0 },
          changed: {
            variables: p.operator === 'detect' ? ['checked'] : [],
            removed: [],
            keys: p.operator === 'enrich' ? { highest: ['Alice'] } : {}
          },
          status: 'running',
          count: p.index
        });
      case 'run.page':
        return ok({ total: 1, start: 0, items: [tuple('Alice', 60)] });
      case 'debug.progress':
        return ok({ progress: this.replayProgress });
      case 'debug.cancel': {
        // The held jump or step fails as cancelled, like the replay process stopped.
        const stopped = this.requests.filter(
          r => r.method.startsWith('debug.') && r.method !== 'debug.cancel' && this.held.has(r.id)
        );
        for (const r of stopped) {
          this.held.delete(r.id);
          later(() =>
            comm.push({
              kind: 'reply',
              id: r.id,
              ok: false,
              error: { type: 'cancelled', message: `${r.method} was cancelled` }
            })
          );
        }
        return ok({ cancelled: stopped.length > 0 });
      }
      case 'debug.view':
        return ok(this.jumped ? this.view('jump to I1', 1) : null);
      case 'debug.jump':
        this.jumped = true;
        this.position = 0;
        this.atDetect = [];
        return ok(this.view(`jump to I${p.index}`, p.index));
      case 'debug.step_over': {
        if (this.atDetect.length) {
          return fail('refused', this.view('', null).options.refused['0']);
        }
        const record = this.inputs[this.position++] as { v: { customer: string; amount: number } };
        return ok(
          this.view(
            `step over on partition ${p.partition}`,
            null,
            [tuple(record.v.customer, record.v.amount)],
            p.partition
          )
        );
      }
      case 'debug.step_into': {
        if (p.operator === 'enrich') {
          const record = this.inputs[this.position++] as { v: { customer: string; amount: number } };
          this.atDetect = [tuple(record.v.customer, record.v.amount, record.v.amount)];
        } else {
          return fail('refused', `no record waits at '${p.operator}' on partition ${p.partition}`);
        }
        return ok(this.view(`step into 'enrich' on partition ${p.partition}`, null, [], p.partition, 'enrich'));
      }
      case 'debug.step_out':
        if (!this.atDetect.length) {
          return fail('refused', `no scope is in progress on partition ${p.partition}: nothing waits downstream of θ`);
        }
        this.atDetect = [];
        this.blacklist.push('Bob');
        this.frauds += 1;
        return ok(this.view(`step out on partition ${p.partition}`, null, [], p.partition));
      case 'debug.state': {
        const state =
          p.operator === 'enrich'
            ? { highest: { Chris: 10 } }
            : p.operator === 'detect'
              ? { blacklist: { $t: 'set', v: this.blacklist }, checked: 1 }
              : { frauds: this.frauds };
        return ok({
          state,
          changed: { variables: p.operator === 'filter' && this.frauds ? ['frauds'] : [], removed: [], keys: {} }
        });
      }
    }
  }

  release(method: string): void {
    for (const request of this.requests.filter(r => r.method === method)) {
      this.held.get(request.id)?.();
      this.held.delete(request.id);
    }
  }

  event(event: string, data: unknown): void {
    this.comm.push({ kind: 'event', event, data });
  }

  methods(): string[] {
    return this.requests.map(r => r.method);
  }
}

/** A clock the tests move by hand. */
export class ManualClock implements IClock {
  time = 1000;
  timers: { at: number; fn: () => void; id: number }[] = [];
  private _next = 1;

  now(): number {
    return this.time;
  }

  setTimeout(fn: () => void, ms: number): unknown {
    const id = this._next++;
    this.timers.push({ at: this.time + ms, fn, id });
    return id;
  }

  clearTimeout(handle: unknown): void {
    this.timers = this.timers.filter(t => t.id !== handle);
  }

  advance(ms: number): void {
    this.time += ms;
    const due = this.timers.filter(t => t.at <= this.time);
    this.timers = this.timers.filter(t => t.at > this.time);
    for (const timer of due) {
      timer.fn();
    }
  }
}

export async function setupTimeTravel(
  configure: (kernel: TimeTravelKernel) => void = () => undefined,
  clock?: IClock
): Promise<{ kernel: TimeTravelKernel; runs: RunsModel; tt: TimeTravelModel; client: IcedteaClient }> {
  const kernel = new TimeTravelKernel();
  configure(kernel);
  const client = new IcedteaClient({ helloTimeout: 500, requestTimeout: 500 });
  const runs = new RunsModel(client);
  const tt = new TimeTravelModel(runs, client, clock ? { clock } : {});
  client.setKernel(kernel.asKernel);
  await flush(60);
  return { kernel, runs, tt, client };
}
