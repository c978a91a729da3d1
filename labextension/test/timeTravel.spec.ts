import { DebugModel } from '../src/debugModel';
import type { IRunsSource } from '../src/model';
import type { IEventMessage } from '../src/protocol';
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
    expect(states[0]).toMatchObject({ partition: 0, loading: false, state: { highest: { Alice: 60 } }, changed: { keys: { highest: ['Alice'] } } });
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
    expect(tt.debug.stepOutState(0)).toMatchObject({ enabled: false, reason: expect.stringContaining('nothing waits downstream') });
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
    expect(tt.debug.stepOverState(0)).toEqual({ enabled: false, reason: 'Jump to an interaction first: click one on the timeline' });
    await tt.debug.jump(1);
    kernel.holdMethods.add('debug.step_over');
    const step = tt.debug.stepOver(0);
    await flush();
    expect(tt.debug.busy).toBe('step over on partition 0');
    expect(tt.debug.stepOverState(0)).toMatchObject({ enabled: false, reason: 'Waiting for the kernel: step over on partition 0' });
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
    kernel.event('debug.moved', { run: 'r1', view: kernel.view('step over on partition 0', null) });
    expect(tt.debug.view?.step).toBe('step over on partition 0');
    expect(tt.debug.lastPartition).toBe(0);
    await flush(40);
    expect(tt.snapshot.mode).toBe('debug');
    expect(tt.snapshot.selectedPartition).toBe(0);
    // Another run's debugger is not ours.
    kernel.event('debug.moved', { run: 'zz', view: kernel.view('jump to I0', 0) });
    expect(tt.debug.view?.step).toBe('step over on partition 0');
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
      request: (() => Promise.reject(Object.assign(new Error('no interaction I9'), { type: 'not_found' }))) as IRunsSource['request']
    };
    const debug = new DebugModel(source);
    debug.setRun('r1', 'finished');
    await debug.jump(9);
    expect(debug.error).toMatchObject({ action: 'jump to I9', message: 'no interaction I9' });
  });
});

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
    kernel.event('run.action', { run: 'r1', action: { time: 1, source: 'sidebar', call: 'run.interact()' } });
    expect(seen.map(e => e.event)).toEqual(['run.interaction', 'debug.moved', 'run.action']);
    expect(row('A', 1)).toEqual({ $t: 'row', v: { customer: 'A', amount: 1, currency: '$' } });
  });
});
