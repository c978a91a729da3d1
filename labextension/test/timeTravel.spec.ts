import { Signal } from '@lumino/signaling';

import { RequestError } from '../src/comm/client';
import { CANCEL_TIMEOUT, DebugModel, preparingText } from '../src/timetravel/debugModel';
import type { IRunsSource } from '../src/runs/model';
import type { IEventMessage, IReplayProgress } from '../src/comm/protocol';
import { flush } from './fakeKernel';
import { interaction, ManualClock, row, setupTimeTravel, TimeTravelKernel, tuple } from './timeTravelKernel';

describe('TimelineModel', () => {
  it('loads the interactions of the selected run in index order', async () => {
    const { kernel, tt } = await setupTimeTravel(k => {
      k.interactions = [k.interactions[2], k.interactions[0], k.interactions[1]];
    });
    expect(kernel.methods()).toContain('run.interactions');
    expect(tt.timeline.runId).toBe('r1');
    expect(tt.timeline.interactions.map(i => i.index)).toEqual([0, 1, 2]);
    expect(tt.timeline.interaction(1)?.trigger).toBe('condition');
    // Until the user picks one, the newest is selected.
    expect(tt.timeline.following).toBe(true);
    expect(tt.timeline.selectedIndex).toBe(2);
  });

  it('adds live interactions from run.interaction, replacing one that completed', async () => {
    const clock = new ManualClock();
    const { kernel, tt } = await setupTimeTravel(k => (k.status_ = 'running'), clock);
    expect(tt.timeline.running).toBe(true);
    const changes = jest.fn();
    tt.timeline.changed.connect(changes);
    clock.advance(1000);
    kernel.event('run.interaction', { run: 'r1', interaction: interaction(4, 'periodic', 104, false) });
    kernel.event('run.interaction', { run: 'r1', interaction: interaction(3, 'manual', 103.5) });
    kernel.event('run.interaction', { run: 'r1', interaction: interaction(4, 'periodic', 104, true) });
    // Another run's interaction is not ours.
    kernel.event('run.interaction', { run: 'other', interaction: interaction(9, 'manual', 109) });
    expect(tt.timeline.interactions.map(i => i.index)).toEqual([0, 1, 2, 3, 4]);
    expect(tt.timeline.interaction(4)?.complete).toBe(true);
    clock.advance(300);
    // Three events, at most two redraws in the first 250 ms (the first at once, then the rest together).
    expect(changes.mock.calls.length).toBeLessThanOrEqual(2);
    expect(tt.timeline.selectedIndex).toBe(4);
  });

  it('jumps the debugger to an interaction clicked after the run', async () => {
    const { kernel, tt } = await setupTimeTravel();
    await tt.timeline.activate(1);
    const jump = kernel.requests.find(r => r.method === 'debug.jump');
    expect(jump?.params).toEqual({ run: 'r1', index: 1, source: 'sidebar' });
    expect(tt.timeline.selectedIndex).toBe(1);
    expect(tt.timeline.following).toBe(false);
    expect(tt.debug.view?.index).toBe(1);
    await flush(40);
    expect(tt.snapshot.mode).toBe('debug');
    expect(tt.snapshot.title).toBe('Debugger: jump to I1 (I1)');
  });

  it('shows the recorded snapshot of an interaction clicked while the run records (no jump)', async () => {
    const { kernel, tt } = await setupTimeTravel(k => (k.status_ = 'running'));
    await tt.timeline.activate(1);
    await flush(40);
    expect(kernel.methods()).not.toContain('debug.jump');
    expect(kernel.methods()).not.toContain('debug.view');
    expect(tt.snapshot.mode).toBe('recorded');
    expect(tt.snapshot.index).toBe(1);
    expect(tt.snapshot.partitions.map(p => p.partition)).toEqual([0, 1]);
    expect(tt.snapshot.operators).toEqual(['enrich', 'detect', 'filter']);
    const states = tt.snapshot.states;
    expect(states.map(s => s.operator)).toEqual(['enrich', 'detect', 'filter']);
    expect(states[0]).toMatchObject({
      partition: 0,
      loading: false,
      state: { highest: { Alice: 60 } },
      changed: { keys: { highest: ['Alice'] } }
    });
    const stateRequests = kernel.requests.filter(r => r.method === 'run.state').map(r => r.params);
    expect(stateRequests).toContainEqual({ run: 'r1', index: 1, operator: 'detect', partition: 0 });
  });

  it('takes a manual interaction while the run records', async () => {
    const { kernel, tt } = await setupTimeTravel(k => (k.status_ = 'running'));
    const made = await tt.timeline.interact();
    expect(made?.trigger).toBe('manual');
    expect(kernel.requests.find(r => r.method === 'run.interact')?.params).toEqual({ run: 'r1', source: 'sidebar' });
    expect(tt.timeline.interactions.map(i => i.index)).toEqual([0, 1, 2, 3]);
    expect(tt.timeline.interacting).toBe(false);
  });

  it('does not ask for an interaction after the run', async () => {
    const { kernel, tt } = await setupTimeTravel();
    expect(await tt.timeline.interact()).toBeNull();
    expect(kernel.methods()).not.toContain('run.interact');
  });

  it('reloads the final list when the run ends, and lets the debugger load', async () => {
    const { kernel, tt } = await setupTimeTravel(k => (k.status_ = 'running'));
    kernel.requests = [];
    kernel.status_ = 'finished';
    kernel.event('run.status', { run: 'r1', status: 'finished', error: null, warnings: [] });
    await flush(60);
    expect(tt.timeline.running).toBe(false);
    expect(kernel.methods()).toEqual(expect.arrayContaining(['run.interactions', 'debug.view']));
  });
});

describe('DebugModel', () => {
  it('disables a step-over the kernel refuses, with its reason as the tooltip', async () => {
    const { tt } = await setupTimeTravel();
    await tt.debug.jump(1);
    expect(tt.debug.stepOverState(0)).toMatchObject({ enabled: true });
    expect(tt.debug.stepOverState(0).reason).toContain("Row(customer='Chris', amount=10, currency='$')");
    // Nothing waits downstream yet: nothing to step out of.
    expect(tt.debug.stepOutState(0)).toMatchObject({
      enabled: false,
      reason: expect.stringContaining('nothing waits downstream')
    });
    await tt.debug.stepOver(0);
    await tt.debug.stepInto(0, 'enrich');
    const over = tt.debug.stepOverState(0);
    expect(over.enabled).toBe(false);
    expect(over.reason).toBe("1 record(s) of the scope of θ's input #1 still wait at 'detect'; step_out first");
    expect(tt.debug.stepOutState(0).enabled).toBe(true);
    // Step into follows the record: the deepest operator with a waiting record.
    expect(tt.debug.stepIntoState(0)).toMatchObject({ enabled: true, operator: 'detect' });
    expect(tt.debug.stepIntoState(0, 'filter')).toMatchObject({ enabled: false });
    expect(tt.debug.pending(0, 'detect')?.records).toEqual([tuple('Bob', 5000, 5000)]);
    // Partition 1 has nothing waiting anywhere.
    expect(tt.debug.stepIntoState(1)).toMatchObject({ enabled: false, reason: 'No record waits on partition 1' });
  });

  it('shows a refused step inline and keeps the view', async () => {
    const { kernel, tt } = await setupTimeTravel();
    await tt.debug.jump(1);
    const before = tt.debug.view;
    await tt.debug.stepOut(0);
    expect(kernel.methods()).toContain('debug.step_out');
    expect(tt.debug.error).toEqual({
      type: 'refused',
      message: 'no scope is in progress on partition 0: nothing waits downstream of θ',
      action: 'step out on partition 0',
      partition: 0
    });
    expect(tt.debug.view).toBe(before);
    expect(tt.debug.busy).toBeNull();
    // The next successful step clears it.
    await tt.debug.stepOver(0);
    expect(tt.debug.error).toBeNull();
    expect(tt.debug.view?.step).toBe('step over on partition 0');
    expect(tt.debug.view?.outputs).toEqual([tuple('Chris', 10)]);
  });

  it('disables every step while one is on its way, and without a jump', async () => {
    const { kernel, tt } = await setupTimeTravel();
    expect(tt.debug.stepOverState(0)).toEqual({
      enabled: false,
      reason: 'Jump to an interaction first: click one on the timeline'
    });
    await tt.debug.jump(1);
    kernel.holdMethods.add('debug.step_over');
    const step = tt.debug.stepOver(0);
    await flush();
    expect(tt.debug.busy).toBe('step over on partition 0');
    expect(tt.debug.stepOverState(0)).toMatchObject({
      enabled: false,
      reason: 'Waiting for the kernel: step over on partition 0'
    });
    // A second click while busy sends nothing.
    await tt.debug.stepOver(0);
    expect(kernel.requests.filter(r => r.method === 'debug.step_over')).toHaveLength(1);
    kernel.release('debug.step_over');
    await step;
    expect(tt.debug.busy).toBeNull();
  });

  it('follows debug.moved events (steps from the panel or Python code)', async () => {
    const { kernel, tt } = await setupTimeTravel();
    kernel.jumped = true;
    kernel.position = 1;
    kernel.event('debug.moved', { run: 'r1', view: kernel.view('step over on partition 0', null, [], 0) });
    expect(tt.debug.view?.step).toBe('step over on partition 0');
    expect(tt.debug.lastPartition).toBe(0);
    await flush(40);
    expect(tt.snapshot.mode).toBe('debug');
    expect(tt.snapshot.selectedPartition).toBe(0);
    // Another run's debugger is not ours.
    kernel.event('debug.moved', { run: 'zz', view: kernel.view('jump to I0', 0) });
    expect(tt.debug.view?.step).toBe('step over on partition 0');
  });

  it("takes a step's partition from the view's field, not from its text", async () => {
    const { kernel, tt } = await setupTimeTravel();
    kernel.jumped = true;
    kernel.event('debug.moved', { run: 'r1', view: kernel.view('a step on the second one', null, [], 1) });
    expect(tt.debug.lastPartition).toBe(1);
    kernel.event('debug.moved', { run: 'r1', view: kernel.view('step over on partition 0', null) });
    expect(tt.debug.lastPartition).toBe(1);
  });

  it('keeps the action log of the run', async () => {
    const { kernel, tt } = await setupTimeTravel();
    kernel.event('run.action', { run: 'r1', action: { time: 5, source: 'api', call: 'dbg.jump(1)' } });
    expect(tt.debug.actions).toEqual([{ time: 5, source: 'api', call: 'dbg.jump(1)' }]);
  });

  it('reports an error that is not a refusal with its type', async () => {
    const events = { connect: () => undefined, disconnect: () => undefined } as unknown as IRunsSource['event'];
    const source: IRunsSource = {
      state: 'ready',
      stateChanged: events as unknown as IRunsSource['stateChanged'],
      event: events,
      request: (() =>
        Promise.reject(Object.assign(new Error('no interaction I9'), { type: 'not_found' }))) as IRunsSource['request']
    };
    const debug = new DebugModel(source);
    debug.setRun('r1', 'finished');
    await debug.jump(9);
    expect(debug.error).toMatchObject({ action: 'jump to I9', message: 'no interaction I9' });
  });
});

describe('DebugModel: cancel', () => {
  it('sends debug.cancel for the run while a jump is on its way, and shows the cancelled jump as an error', async () => {
    const { kernel, tt } = await setupTimeTravel();
    await tt.debug.jump(1);
    const before = tt.debug.view;
    kernel.holdMethods.add('debug.jump');
    const jump = tt.debug.jump(2);
    await flush();
    expect(tt.debug.busy).toBe('jump to I2');
    const cancel = tt.debug.cancel();
    expect(tt.debug.cancelling).toBe(true);
    await expect(cancel).resolves.toBe(true);
    await jump;
    expect(kernel.requests.filter(r => r.method === 'debug.cancel').map(r => r.params)).toEqual([
      { run: 'r1', source: 'sidebar' }
    ]);
    expect(tt.debug.busy).toBeNull();
    expect(tt.debug.cancelling).toBe(false);
    expect(tt.debug.error).toEqual({
      type: 'cancelled',
      message: 'debug.jump was cancelled',
      action: 'jump to I2',
      partition: null
    });
    // The view stays as it was.
    expect(tt.debug.view).toBe(before);
    expect(tt.debug.view?.index).toBe(1);
  });

  it('cancels a step too, and sends nothing when nothing is on its way', async () => {
    const { kernel, tt } = await setupTimeTravel();
    expect(await tt.debug.cancel()).toBe(false);
    await tt.debug.jump(1);
    expect(await tt.debug.cancel()).toBe(false);
    expect(kernel.methods()).not.toContain('debug.cancel');
    kernel.holdMethods.add('debug.step_over');
    const step = tt.debug.stepOver(0);
    await flush();
    // A second click while the first cancel is on its way sends nothing more.
    const cancels = [tt.debug.cancel(), tt.debug.cancel()];
    expect(await Promise.all(cancels)).toEqual([true, false]);
    await step;
    expect(kernel.requests.filter(r => r.method === 'debug.cancel')).toHaveLength(1);
    expect(tt.debug.error).toMatchObject({ type: 'cancelled', action: 'step over on partition 0', partition: 0 });
    expect(tt.debug.view?.step).toBe('jump to I1');
  });

  it('shows a failed cancel like other errors, with a short timeout', async () => {
    let finishJump: (reason: unknown) => void = () => undefined;
    const timeouts: { [method: string]: number | undefined } = {};
    let cancels = 0;
    const source = fakeSource((method, params, timeout) => {
      timeouts[method] = timeout;
      if (method === 'debug.jump') {
        return new Promise((_, reject) => (finishJump = reject));
      }
      if (method === 'debug.cancel') {
        return ++cancels === 1
          ? Promise.reject(new RequestError('debug.cancel: no reply in 5 s', 'timeout'))
          : Promise.resolve({ cancelled: true });
      }
      return Promise.resolve(
        method === 'debug.progress' ? { progress: null } : method === 'run.actions' ? { run: 'r1', actions: [] } : null
      );
    });
    const debug = new DebugModel(source.source);
    debug.setRun('r1', 'finished');
    const jump = debug.jump(3);
    expect(await debug.cancel()).toBe(false);
    expect(timeouts['debug.cancel']).toBe(CANCEL_TIMEOUT);
    expect(CANCEL_TIMEOUT).toBeLessThanOrEqual(10_000);
    expect(debug.error).toEqual({
      type: 'timeout',
      message: 'debug.cancel: no reply in 5 s',
      action: 'cancel jump to I3',
      partition: null
    });
    expect(debug.busy).toBe('jump to I3');
    expect(debug.cancelling).toBe(false);
    // The jump then comes back cancelled after all, as an internal error.
    finishJump(new RequestError('the jump was cancelled', 'internal'));
    await jump;
    expect(debug.busy).toBeNull();
    expect(debug.error).toMatchObject({ type: 'internal', message: 'the jump was cancelled', action: 'jump to I3' });
    expect(debug.view).toBeNull();
    // Stopped before the jump's reply came: still cancelling until it does.
    const next = debug.jump(4);
    expect(await debug.cancel()).toBe(true);
    expect(debug.cancelling).toBe(true);
    expect(await debug.cancel()).toBe(false);
    expect(cancels).toBe(2);
    finishJump(new RequestError('the jump was cancelled', 'cancelled'));
    await next;
    expect(debug.cancelling).toBe(false);
    expect(debug.busy).toBeNull();
    expect(debug.error).toMatchObject({ type: 'cancelled', action: 'jump to I4' });
  });
});

describe('DebugModel: preparation of time travel', () => {
  const preparing = (done: number, of: number): IReplayProgress => ({ state: 'preparing', done, of });

  it('fetches the progress when it follows an ended run', async () => {
    const { kernel, tt } = await setupTimeTravel(k => (k.replayProgress = preparing(1, 3)));
    expect(kernel.requests.filter(r => r.method === 'debug.progress').map(r => r.params)).toEqual([{ run: 'r1' }]);
    expect(tt.debug.progress).toEqual(preparing(1, 3));
  });

  it('does not ask while the run records, and asks once it ended', async () => {
    const { kernel, tt } = await setupTimeTravel(k => {
      k.status_ = 'running';
      k.replayProgress = null;
    });
    expect(kernel.methods()).not.toContain('debug.progress');
    expect(tt.debug.progress).toBeNull();
    kernel.status_ = 'finished';
    kernel.replayProgress = { state: 'starting', done: 0, of: 0 };
    kernel.event('run.status', { run: 'r1', status: 'finished', error: null, warnings: [] });
    await flush(60);
    expect(kernel.methods()).toContain('debug.progress');
    expect(tt.debug.progress).toEqual({ state: 'starting', done: 0, of: 0 });
  });

  it('follows debug.preparing events of the current run only', async () => {
    const { kernel, tt } = await setupTimeTravel(k => (k.replayProgress = null));
    expect(tt.debug.progress).toBeNull();
    const changes = jest.fn();
    tt.debug.changed.connect(changes);
    kernel.event('debug.preparing', { run: 'r1', progress: preparing(2, 5) });
    expect(tt.debug.progress).toEqual(preparing(2, 5));
    expect(changes).toHaveBeenCalledTimes(1);
    // The same progress again changes nothing.
    kernel.event('debug.preparing', { run: 'r1', progress: preparing(2, 5) });
    expect(changes).toHaveBeenCalledTimes(1);
    // Another run's preparation is not ours.
    kernel.event('debug.preparing', { run: 'zz', progress: { state: 'failed', done: 0, of: 5, error: 'boom' } });
    expect(tt.debug.progress).toEqual(preparing(2, 5));
    expect(changes).toHaveBeenCalledTimes(1);
    kernel.event('debug.preparing', { run: 'r1', progress: { state: 'ready', done: 5, of: 5 } });
    expect(tt.debug.progress?.state).toBe('ready');
    expect(changes).toHaveBeenCalledTimes(2);
  });

  it('keeps an event that arrives while the fetched progress is on its way', async () => {
    const { kernel, tt } = await setupTimeTravel(k => {
      k.replayProgress = preparing(0, 4);
      k.holdMethods.add('debug.progress');
    });
    kernel.event('debug.preparing', { run: 'r1', progress: preparing(3, 4) });
    kernel.release('debug.progress');
    await flush(20);
    expect(tt.debug.progress).toEqual(preparing(3, 4));
  });

  it('forgets the progress of the previous run', async () => {
    const source = fakeSource(method =>
      Promise.resolve(
        method === 'debug.progress'
          ? { progress: preparing(1, 2) }
          : method === 'run.actions'
            ? { run: 'x', actions: [] }
            : null
      )
    );
    const debug = new DebugModel(source.source);
    debug.setRun('r1', 'finished');
    await flush();
    expect(debug.progress).toEqual(preparing(1, 2));
    debug.setRun('r2', 'running');
    expect(debug.progress).toBeNull();
    source.emit({ kind: 'event', event: 'debug.preparing', data: { run: 'r1', progress: preparing(2, 2) } });
    expect(debug.progress).toBeNull();
  });

  it('says how far the preparation is', () => {
    expect(preparingText(null)).toBeNull();
    expect(preparingText({ state: 'starting', done: 0, of: 0 })).toBe('Preparing time travel: starting…');
    expect(preparingText({ state: 'preparing', done: 0, of: 0 })).toBe('Preparing time travel: starting…');
    expect(preparingText({ state: 'starting', done: 0, of: 7 })).toBe('Preparing time travel: 0%');
    expect(preparingText(preparing(2, 5))).toBe('Preparing time travel: 40%');
    expect(preparingText(preparing(2, 3))).toBe('Preparing time travel: 66%');
    expect(preparingText({ state: 'ready', done: 5, of: 5 })).toBeNull();
    expect(preparingText({ state: 'failed', done: 1, of: 5, error: 'the replay process died' })).toBe(
      'Time travel could not be prepared: the replay process died'
    );
  });
});

/** A source whose requests `answer` serves, with events pushed by `emit`. */
function fakeSource(answer: (method: string, params: unknown, timeout?: number) => Promise<unknown>): {
  source: IRunsSource;
  emit: (msg: IEventMessage) => void;
} {
  const owner = {};
  const event = new Signal<unknown, IEventMessage>(owner);
  const stateChanged = new Signal<unknown, IRunsSource['state']>(owner);
  const source: IRunsSource = {
    state: 'ready',
    stateChanged,
    event,
    request: ((method: string, params: unknown, timeout?: number) =>
      answer(method, params, timeout)) as IRunsSource['request']
  };
  return { source, emit: msg => event.emit(msg) };
}

describe('SnapshotModel', () => {
  it('shows the debugger view after a jump and follows the stepped partition', async () => {
    const { kernel, tt } = await setupTimeTravel();
    await tt.timeline.activate(1);
    await flush(40);
    expect(tt.snapshot.partitions.map(p => p.partition)).toEqual([0, 1]);
    expect(tt.snapshot.partitions[0].workers).toEqual([
      { operator: 'enrich', status: 'replayed', count: 0 },
      { operator: 'detect', status: 'replayed', count: 0 },
      { operator: 'filter', status: 'replayed', count: 0 }
    ]);
    tt.snapshot.selectPartition(1);
    await flush(40);
    expect(tt.snapshot.selectedPartition).toBe(1);
    await tt.debug.stepOver(0);
    await tt.debug.stepInto(0, 'enrich');
    await tt.debug.stepOut(0);
    await flush(40);
    expect(tt.snapshot.selectedPartition).toBe(0);
    const [, detect, filter] = tt.snapshot.states;
    expect(detect.state).toEqual({ blacklist: { $t: 'set', v: ['Bob'] }, checked: 1 });
    expect(filter.state).toEqual({ frauds: 1 });
    expect(filter.changed?.variables).toEqual(['frauds']);
    // What the view showed before the step, for "was 0".
    expect(filter.previous).toEqual({ frauds: 0 });
    const requests = kernel.requests.filter(r => r.method === 'debug.state').map(r => r.params);
    expect(requests).toContainEqual({ run: 'r1', operator: 'detect', partition: 0 });
  });

  it('pages a variable of a recorded snapshot with run.page', async () => {
    const { kernel, tt } = await setupTimeTravel(k => (k.status_ = 'running'));
    await tt.timeline.activate(1);
    await flush(40);
    const page = await tt.snapshot.page('enrich', 'highest', 0, 50);
    expect(page.items).toEqual([tuple('Alice', 60)]);
    expect(kernel.requests.find(r => r.method === 'run.page')?.params).toEqual({
      run: 'r1',
      index: 1,
      operator: 'enrich',
      partition: 0,
      variable: 'highest',
      start: 0,
      size: 50
    });
  });

  it('drops a snapshot that arrives after another was selected', async () => {
    const { kernel, tt } = await setupTimeTravel(k => (k.status_ = 'running'));
    kernel.holdMethods.add('run.snapshot');
    void tt.timeline.activate(0);
    await flush();
    kernel.holdMethods.clear();
    await tt.timeline.activate(2);
    await flush(40);
    kernel.release('run.snapshot'); // the answer for I0, late
    await flush(40);
    expect(tt.snapshot.index).toBe(2);
    expect(tt.snapshot.states[0].count).toBe(2);
  });

  it('is empty without a run', async () => {
    const kernel = new TimeTravelKernel();
    kernel.targetRegistered = false;
    const { tt } = await setupTimeTravel(k => (k.targetRegistered = false));
    expect(tt.snapshot.mode).toBe('empty');
    expect(tt.timeline.runId).toBeNull();
    expect(tt.debug.view).toBeNull();
  });
});

describe('events', () => {
  it('carries the new event types through the client', async () => {
    const { kernel, client } = await setupTimeTravel();
    const seen: IEventMessage[] = [];
    client.event.connect((_, e) => seen.push(e));
    kernel.event('run.interaction', { run: 'r1', interaction: interaction(3, 'manual', 103) });
    kernel.event('debug.moved', { run: 'r1', view: kernel.view('jump to I0', 0) });
    kernel.event('debug.preparing', { run: 'r1', progress: { state: 'preparing', done: 1, of: 3 } });
    kernel.event('run.action', { run: 'r1', action: { time: 1, source: 'sidebar', call: 'run.interact()' } });
    expect(seen.map(e => e.event)).toEqual(['run.interaction', 'debug.moved', 'debug.preparing', 'run.action']);
    expect(row('A', 1)).toEqual({ $t: 'row', v: { customer: 'A', amount: 1, currency: '$' } });
  });
});
