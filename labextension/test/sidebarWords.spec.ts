/**
 * What the sidebar says and enables (issue 19: a new user's first hour): step buttons
 * and the status line from the same data, refusals in words, what the highlights of a
 * snapshot compare with after a jump backward, markers at the same moment spread apart,
 * plurals, numbers, the Parts and Rate columns.
 */
import type { IOperatorProgress, IRunError, IRunSummary } from '../src/comm/protocol';
import { errorTitle, operatorRate, operatorTitle, partsText, shortPath } from '../src/runs/texts';

import { stepCountsText } from '../src/timetravel/debugModel';
import { moreWaiting } from '../src/timetravel/snapshotModel';
import { dodge, MARKER_GAP } from '../src/timetravel/timelineGeometry';
import { formatRate, formatShortCount, plural, verb } from '../src/widgets/format';
import { flush } from './fakeKernel';
import { setupTimeTravel } from './timeTravelKernel';

describe('words and numbers', () => {
  it('pluralizes counts and their verbs', () => {
    expect(plural(1, 'interaction')).toBe('1 interaction');
    expect(plural(2, 'interaction')).toBe('2 interactions');
    expect(plural(1077, 'interaction')).toBe('1,077 interactions');
    expect(plural(0, 'partition')).toBe('0 partitions');
    expect(`${plural(1, 'record')} ${verb(1, 'waits', 'wait')}`).toBe('1 record waits');
    expect(`${plural(3, 'record')} ${verb(3, 'waits', 'wait')}`).toBe('3 records wait');
  });

  it('says what the records not listed are', () => {
    expect(moreWaiting(23, 20)).toBe('… and 3 more records wait here, not listed (the first 20 are)');
    expect(moreWaiting(21, 20)).toBe('… and 1 more record waits here, not listed (the first 20 are)');
    expect(moreWaiting(20, 20)).toBe('');
  });

  it('shortens counts for narrow columns, in one format', () => {
    expect(formatShortCount(999_999)).toBe('999,999');
    expect(formatShortCount(1_234_567)).toBe('1.23M');
    expect(formatShortCount(45_600_000)).toBe('45.6M');
    expect(formatShortCount(2_500_000_000)).toBe('2.50B');
    expect(formatShortCount(null)).toBe('–');
    // Rates fit a quarter of the sidebar too: at most 6 characters.
    expect(formatRate(130_100)).toBe('130k/s');
    expect(formatRate(12_345)).toBe('12.3k/s');
    expect(formatRate(2_500_000)).toBe('2.5M/s');
  });

  it("names an aggregation's sides as the kernel does, the phase in the tooltip only", () => {
    const merge: IOperatorProgress = {
      operator: 'count',
      phase: 'merge',
      records_in: 98,
      records_out: 25,
      done: 4,
      running: 0,
      failed: 0,
      rate: 0,
      average_rate: 49
    };
    const title = operatorTitle(merge, 'done', undefined);
    expect(title.startsWith('count: done')).toBe(true);
    expect(title).toContain('the reduce side (merge)');
    expect(title).not.toContain('count (merge)');
  });

  it('says what Parts counts, in words', () => {
    const p = { done: 3, running: 0, failed: 1 } as IOperatorProgress;
    expect(partsText(p)).toBe('4 partitions: 3 done, 1 failed');
    expect(partsText({ done: 1, running: 0, failed: 0 } as IOperatorProgress)).toBe('1 partition: 1 done');
  });

  it('shows the average rate once an operator has ended, the live one while it runs', () => {
    const p = { operator: 'parse', done: 4, running: 0, failed: 0, rate: 0, average_rate: 12_345 } as IOperatorProgress;
    const ended = { status: 'finished', error: null } as unknown as IRunSummary;
    expect(operatorRate(ended, p)).toMatchObject({ text: '12.3k/s', average: true });
    const running = { status: 'running', error: null } as unknown as IRunSummary;
    expect(operatorRate(running, { ...p, running: 2, rate: 500 })).toMatchObject({ text: '500/s', average: false });
  });

  it('titles the error card by what became of the run: failed, or a retried task', () => {
    const error = { operator: 'parse', partition: 1 } as unknown as IRunError;
    expect(errorTitle(error, 'failed')).toBe('Failed in operator parse, partition 1');
    expect(errorTitle(error, 'finished')).toBe(
      'A task failed in operator parse, partition 1; Spark retried it and the run finished'
    );
    expect(errorTitle(error, 'running')).toBe('A task failed in operator parse, partition 1; Spark may retry it');
    expect(errorTitle({ operator: null, partition: null } as unknown as IRunError, 'failed')).toBe('Failed');
  });

  it("keeps a run store's path short: its last folders", () => {
    expect(shortPath('/tmp/pytest-of-root/lab0/notebooks/.icedtea/runs/20261123-164722-618a28')).toBe(
      '…/runs/20261123-164722-618a28'
    );
    expect(shortPath('runs/r1')).toBe('runs/r1');
  });
});

describe('step buttons and the status line', () => {
  it('disables Over where θ has ended, as the kernel counts, and says so', async () => {
    const { tt } = await setupTimeTravel();
    await tt.debug.jump(1);
    const view = tt.debug.view!;
    expect(view.options.ended).toEqual([1]);
    // Partition 1: θ processed everything and its tree has ended; the kernel counts 1 step-over.
    const over = tt.debug.stepOverState(1);
    expect(over.enabled).toBe(false);
    expect(over.reason).toContain('nothing is left to step over');
    expect(tt.debug.partitionNote(1).text).toBe('all processed');
    const counts = tt.debug.stepCounts();
    expect(counts).toEqual({ partitions: 2, over: 1, into: 1, out: 0 });
    expect(counts.over).toBe(view.options.step_over);
    expect(stepCountsText(counts)).toBe('2 partitions · Over on 1, Into on 1, Out on none');
  });

  it('explains a refused step-over inline, and the status line follows the buttons', async () => {
    const { tt } = await setupTimeTravel();
    await tt.debug.jump(1);
    await tt.debug.stepOver(0);
    await tt.debug.stepInto(0, 'enrich');
    expect(tt.debug.stepOutState(0).reason).toBe('Finish the current scope: 1 record waits downstream of θ');
    expect(tt.debug.partitionNote(0)).toEqual({
      text: 'step out first',
      refused: true
    });
    const counts = tt.debug.stepCounts();
    expect(counts).toEqual({ partitions: 2, over: 0, into: 1, out: 1 });
    expect(counts.over).toBe(tt.debug.view!.options.step_over);
    expect(stepCountsText({ partitions: 2, over: 2, into: 0, out: 1 })).toBe(
      '2 partitions · Over on all, Into on none, Out on 1'
    );
  });

  it('disables every step on a partition θ does not have (fed after a shuffle)', async () => {
    const { kernel, tt } = await setupTimeTravel();
    kernel.jumped = true;
    const view = kernel.view('jump to I1', 1);
    view.workers.push({ operator: 'filter', partition: 5, count: 3 });
    kernel.event('debug.moved', { run: 'r1', view });
    expect(tt.debug.partitions).toEqual([0, 1, 5]);
    for (const state of [tt.debug.stepOverState(5), tt.debug.stepIntoState(5), tt.debug.stepOutState(5)]) {
      expect(state.enabled).toBe(false);
      expect(state.reason).toContain('has no partition 5');
    }
    expect(tt.debug.stepCounts().over).toBe(view.options.step_over);
  });
});

describe('what the highlighted changes compare with', () => {
  it('after a jump backward: the interaction before, not where the debugger was', async () => {
    const { kernel, tt } = await setupTimeTravel();
    await tt.debug.jump(2);
    await tt.debug.stepInto(0, 'enrich');
    await tt.debug.stepOut(0);
    await flush(40);
    const stepped = tt.snapshot.states.find(s => s.operator === 'filter')!;
    expect(stepped.changed?.variables).toEqual(['frauds']);
    const afterStep = tt.snapshot.comparison;

    kernel.requests.length = 0;
    await tt.debug.jump(1);
    await flush(60);
    const states = new Map(tt.snapshot.states.map(s => [s.operator, s]));
    // The filter's frauds did not change between I0 and I1: not highlighted, although the
    // debugger came from a position with one more fraud.
    expect(states.get('filter')!.changed?.variables).toEqual([]);
    expect(states.get('filter')!.previous).toEqual({ frauds: 0 });
    expect(states.get('detect')!.changed?.variables).toEqual(['checked']);
    expect(states.get('detect')!.previous).toMatchObject({ checked: 0 });
    expect(afterStep).toMatchObject({ kind: 'step', text: expect.stringContaining('the last step') });
    expect(tt.snapshot.comparison).toMatchObject({
      kind: 'interaction',
      index: 0,
      text: expect.stringContaining('changes since I0, the interaction before')
    });
    const asked = kernel.requests.filter(r => r.method === 'run.state').map(r => r.params);
    expect(asked).toContainEqual({ run: 'r1', index: 1, operator: 'detect', partition: 0 });
    expect(asked).toContainEqual({ run: 'r1', index: 0, operator: 'detect', partition: 0 });
  });

  it('in a recorded snapshot: "was" is the value at the interaction before, whatever was shown last', async () => {
    const { tt } = await setupTimeTravel(k => (k.status_ = 'running'));
    await tt.timeline.activate(2);
    await flush(60);
    await tt.timeline.activate(1);
    await flush(60);
    const enrich = tt.snapshot.states.find(s => s.operator === 'enrich')!;
    expect(enrich.state).toEqual({ highest: { Alice: 60 } });
    expect(enrich.previous).toEqual({ highest: { Alice: 0 } }); // I0's, not I2's { Alice: 120 }
    expect(tt.snapshot.comparison?.text).toContain('since I0');
  });

  it('at I0 there is nothing to compare with', async () => {
    const { tt } = await setupTimeTravel(k => (k.status_ = 'running'));
    await tt.timeline.activate(0);
    await flush(60);
    // The kernel's changes of I0 are against nothing: every variable; none is highlighted.
    expect(tt.snapshot.states.map(s => [s.changed, s.previous])).toEqual([
      [null, null],
      [null, null],
      [null, null]
    ]);
    expect(tt.snapshot.comparison).toMatchObject({ kind: 'none' });
  });
});

describe('interactions at the same moment on the timeline', () => {
  it('spreads markers that would lie on each other, around their moment', () => {
    const xs = dodge(Float64Array.from([10, 100, 100, 200]));
    expect(xs[0]).toBe(10);
    expect(xs[3]).toBe(200);
    expect(xs[2] - xs[1]).toBeCloseTo(MARKER_GAP);
    expect((xs[1] + xs[2]) / 2).toBeCloseTo(100);
  });

  it('spreads a cluster of three, and pushes a close neighbour', () => {
    const xs = dodge(Float64Array.from([50, 50, 50, 58]));
    for (let i = 1; i < xs.length; i++) {
      expect(xs[i] - xs[i - 1]).toBeGreaterThanOrEqual(MARKER_GAP - 1e-9);
    }
  });

  it('leaves markers apart alone, and a cluster too dense to spread (zoom in)', () => {
    expect(Array.from(dodge(Float64Array.from([0, 20, 40])))).toEqual([0, 20, 40]);
    const dense = new Float64Array(50).fill(120);
    expect(Array.from(dodge(dense))).toEqual(Array.from(dense));
  });
});
