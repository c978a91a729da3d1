import { FrameQueue, IFrameClock, JOB_WAIT, nextFrame } from '../src/widgets/frameQueue';

/** A clock the test advances by hand: each `frame()` paints one frame and runs the
 * tasks that were waiting for it; `pass(ms)` runs the timers due. */
class HandClock implements IFrameClock {
  nextFrame(fn: () => void): void {
    this._frames.push(fn);
  }
  nextTask(fn: () => void): void {
    this._tasks.push(fn);
  }
  after(ms: number, fn: () => void): void {
    this._timers.push({ at: this._now + ms, fn });
  }
  frame(): void {
    this._frames.splice(0).forEach(fn => fn());
    this._tasks.splice(0).forEach(fn => fn());
  }
  pass(ms: number): void {
    this._now += ms;
    const due = this._timers.filter(t => t.at <= this._now);
    this._timers = this._timers.filter(t => t.at > this._now);
    due.forEach(t => t.fn());
  }
  private _frames: (() => void)[] = [];
  private _tasks: (() => void)[] = [];
  private _timers: { at: number; fn: () => void }[] = [];
  private _now = 0;
}

/** Let settled promises' callbacks run. */
const settle = () => new Promise(resolve => setImmediate(resolve));

describe('FrameQueue', () => {
  it('runs one job a frame, in the order added, never in the caller', () => {
    const clock = new HandClock();
    const queue = new FrameQueue(clock);
    const ran: string[] = [];
    const [bars, timeline, heatmap] = [{}, {}, {}];
    queue.add(bars, () => void ran.push('bars'));
    queue.add(timeline, () => void ran.push('timeline'));
    queue.add(heatmap, () => void ran.push('heatmap'));
    expect(ran).toEqual([]);
    clock.frame();
    expect(ran).toEqual(['bars']);
    clock.frame();
    expect(ran).toEqual(['bars', 'timeline']);
    clock.frame();
    expect(ran).toEqual(['bars', 'timeline', 'heatmap']);
    clock.frame();
    expect(ran).toEqual(['bars', 'timeline', 'heatmap']);
    expect(queue.size).toBe(0);
  });

  it("an owner's job added again runs once, the latest, in the first one's place", () => {
    const clock = new HandClock();
    const queue = new FrameQueue(clock);
    const ran: string[] = [];
    const [bars, heatmap] = [{}, {}];
    queue.add(bars, () => void ran.push('bars 1'));
    queue.add(heatmap, () => void ran.push('heatmap'));
    queue.add(bars, () => void ran.push('bars 2'));
    clock.frame();
    clock.frame();
    clock.frame();
    expect(ran).toEqual(['bars 2', 'heatmap']);
  });

  it('a job that throws, rejects, or is cancelled does not stop the others', async () => {
    const clock = new HandClock();
    const queue = new FrameQueue(clock);
    const ran: string[] = [];
    const [broken, rejected, gone, last] = [{}, {}, {}, {}];
    const quiet = jest.spyOn(console, 'error').mockImplementation(() => undefined);
    queue.add(broken, () => {
      throw new Error('no view');
    });
    queue.add(rejected, () => Promise.reject(new Error('no spec')));
    queue.add(gone, () => void ran.push('gone'));
    queue.add(last, () => void ran.push('last'));
    queue.cancel(gone);
    clock.frame();
    clock.frame();
    await settle();
    clock.frame();
    expect(ran).toEqual(['last']);
    expect(quiet).toHaveBeenCalledTimes(2);
    quiet.mockRestore();
  });

  it("a draw in steps holds the queue until it is done: no other job's work in its frames", async () => {
    const clock = new HandClock();
    const queue = new FrameQueue(clock);
    const ran: string[] = [];
    queue.add({}, async () => {
      ran.push('compile');
      await nextFrame(clock);
      ran.push('parse');
      await nextFrame(clock);
      ran.push('render');
    });
    queue.add({}, () => void ran.push('rows'));
    clock.frame();
    await settle();
    expect(ran).toEqual(['compile']);
    clock.frame();
    await settle();
    expect(ran).toEqual(['compile', 'parse']); // one step a frame, the rows wait
    clock.frame();
    await settle();
    expect(ran).toEqual(['compile', 'parse', 'render']);
    clock.frame();
    await settle();
    expect(ran).toEqual(['compile', 'parse', 'render', 'rows']);
  });

  it('a job that never settles holds the queue JOB_WAIT ms, not forever', () => {
    const clock = new HandClock();
    const queue = new FrameQueue(clock);
    const ran: string[] = [];
    queue.add({}, () => new Promise(() => undefined));
    queue.add({}, () => void ran.push('next'));
    clock.frame();
    clock.frame();
    expect(ran).toEqual([]);
    clock.pass(JOB_WAIT);
    clock.frame();
    expect(ran).toEqual(['next']);
  });
});
