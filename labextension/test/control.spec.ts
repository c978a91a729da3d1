import { Signal } from '@lumino/signaling';

import type { IControlView, IEventMessage, IHitItem } from '../src/comm/protocol';
import { ControlModel } from '../src/control/model';
import { breakpointText, parseReplacement, pauseText, where } from '../src/control/texts';
import type { ClientState } from '../src/comm/client';
import type { IRunsSource, RunsModel } from '../src/runs/model';
import { flush } from './fakeKernel';

function hit(index: number, decision: string | null = null): IHitItem {
  return {
    index,
    kind: 'condition',
    operator: 'detect',
    partition: 3,
    breakpoint: 1,
    record: { $t: 'row', v: { amount: 12000 } },
    state: { seen: 41 },
    error: null,
    total: null,
    time: 100,
    decision,
    input_index: 41
  };
}

function view(changes: Partial<IControlView> = {}): IControlView {
  return { run: 'r1', running: true, paused: false, stopped: false, breakpoints: [], hits: [], ...changes };
}

/** A kernel that answers live control's requests with `current` and records them. */
function setup() {
  const requests: { method: string; params: { [key: string]: unknown } }[] = [];
  const current = { view: view() };
  const source = {
    state: 'ready' as const,
    stateChanged: new Signal<unknown, ClientState>({}),
    event: new Signal<unknown, IEventMessage>({}),
    request: jest.fn(async (method: string, params: { [key: string]: unknown }) => {
      requests.push({ method, params });
      if (method === 'control.pause') {
        return { seconds: 0.012, acknowledged: 8, pending: 0 };
      }
      if (method === 'control.resume') {
        return { seconds: 0.004 };
      }
      if (method === 'control.live_state') {
        return { state: { total: 5 } };
      }
      return current.view;
    })
  };
  const runs = { changed: new Signal<unknown, void>({}), state: 'ready', selectedId: 'r1' };
  const model = new ControlModel(runs as unknown as RunsModel, source as unknown as IRunsSource);
  const push = (v: IControlView) =>
    source.event.emit({ kind: 'event', event: 'run.control', data: { run: 'r1', view: v } });
  return { model, requests, current, push, source };
}

describe('ControlModel', () => {
  it('loads the selected run and follows its run.control events, announcing new hits once', async () => {
    const { model, requests, push } = await (async () => {
      const s = setup();
      await flush(5);
      return s;
    })();
    expect(requests[0]).toEqual({ method: 'control.get', params: { run: 'r1' } });
    const arrived = jest.fn();
    model.hitArrived.connect((_, h) => arrived(h.index));
    push(view({ paused: true, hits: [hit(0)] }));
    push(view({ paused: true, hits: [hit(0)] }));
    expect(model.pendingHit?.index).toBe(0);
    expect(arrived.mock.calls).toEqual([[0]]);
    push(view({ hits: [hit(0, 'skip')] }));
    expect(model.pendingHit).toBeNull();
  });

  it('sends each action as one request from the sidebar, and says what happened', async () => {
    const { model, requests } = setup();
    await model.pause();
    expect(model.message).toBe('Paused: 8 task(s) held in 12 ms');
    await model.resume();
    await model.addBreakpoint('detect', 'row.amount > 10_000');
    await model.decide(0, 'replace', { $t: 'row', v: { amount: 1 } });
    await model.decide(1, 'skip');
    const sent = requests.filter(r => r.method !== 'control.get');
    expect(sent).toEqual([
      { method: 'control.pause', params: { run: 'r1', source: 'sidebar' } },
      { method: 'control.resume', params: { run: 'r1', source: 'sidebar' } },
      {
        method: 'control.add_breakpoint',
        params: { run: 'r1', source: 'sidebar', operator: 'detect', when: 'row.amount > 10_000' }
      },
      {
        method: 'control.decide',
        params: { run: 'r1', source: 'sidebar', hit: 0, action: 'replace', record: { $t: 'row', v: { amount: 1 } } }
      },
      { method: 'control.decide', params: { run: 'r1', source: 'sidebar', hit: 1, action: 'skip' } }
    ]);
    expect(await model.liveState('detect', 3)).toEqual({ total: 5 });
  });
});

describe('live-control texts', () => {
  it('says where a hit is, what a breakpoint is and how long a pause took', () => {
    expect(where(hit(0))).toBe('#0 condition on detect, partition 3');
    expect(where({ ...hit(3), kind: 'count', partition: null, total: 1000 })).toBe('#3 count on detect: 1000');
    expect(where({ ...hit(4), kind: 'error', error: { exception: 'ZeroDivisionError' } })).toBe(
      '#4 error (ZeroDivisionError) on detect, partition 3'
    );
    const bp = { id: 1, operator: 'detect', kind: 'condition', when: 'row.x > 1', sum_of: null, target: null, hits: 2 };
    expect(breakpointText({ ...bp, armed: true })).toBe('detect: row.x > 1 · 2 hits');
    expect(
      breakpointText({ ...bp, kind: 'sum', when: null, sum_of: 'row.amount', target: 5e6, hits: 1, armed: false })
    ).toBe('detect: sum(row.amount) ≥ 5000000 · 1 hit · off');
    expect(pauseText({ seconds: 0.0123, acknowledged: 8, pending: 2 })).toBe(
      'Paused: 8 task(s) held in 12 ms, 2 not yet'
    );
  });

  it('takes the edited record as tagged JSON, and says why bad JSON is not one', () => {
    expect(parseReplacement('{"$t": "row", "v": {"amount": 12}}')).toEqual({
      record: { $t: 'row', v: { amount: 12 } }
    });
    const bad = parseReplacement('{"amount": ');
    expect('error' in bad && bad.error.startsWith('The record is not JSON')).toBe(true);
  });
});
