import { FrameQueue, IFrameClock } from '../src/widgets/frameQueue';

/** A clock the test advances by hand: each `frame()` paints one frame and runs the
 * tasks that were waiting for it. */
class HandClock implements IFrameClock {
  nextFrame(fn: () => void): void {
    this._frames.push(fn);
  }
  nextTask(fn: () => void): void {
    this._tasks.push(fn);
  }
  frame(): void {
    const frames = this._frames.splice(0);
    frames.forEach(fn => fn());
    const tasks = this._tasks.splice(0);
    tasks.forEach(fn => fn());
  }
  private _frames: (() => void)[] = [];
  private _tasks: (() => void)[] = [];
}

describe('FrameQueue', () => {
  it('runs one job a frame, in the order added, never in the caller', () => {
    const clock = new HandClock();
    const queue = new FrameQueue(clock);
    const ran: string[] = [];
    const [bars, timeline, heatmap] = [{}, {}, {}];
    queue.add(bars, () => ran.push('bars'));
    queue.add(timeline, () => ran.push('timeline'));
    queue.add(heatmap, () => ran.push('heatmap'));
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
    queue.add(bars, () => ran.push('bars 1'));
    queue.add(heatmap, () => ran.push('heatmap'));
    queue.add(bars, () => ran.push('bars 2'));
    clock.frame();
    clock.frame();
    clock.frame();
    expect(ran).toEqual(['bars 2', 'heatmap']);
  });

  it('a job that throws, or is cancelled, does not stop the others', () => {
    const clock = new HandClock();
    const queue = new FrameQueue(clock);
    const ran: string[] = [];
    const [broken, gone, last] = [{}, {}, {}];
    const quiet = jest.spyOn(console, 'error').mockImplementation(() => undefined);
    queue.add(broken, () => {
      throw new Error('no view');
    });
    queue.add(gone, () => ran.push('gone'));
    queue.add(last, () => ran.push('last'));
    queue.cancel(gone);
    clock.frame();
    clock.frame();
    expect(ran).toEqual(['last']);
    expect(quiet).toHaveBeenCalledTimes(1);
    quiet.mockRestore();
  });

  it('a job added while the queue is idle after it emptied is run', () => {
    const clock = new HandClock();
    const queue = new FrameQueue(clock);
    const ran: number[] = [];
    const chart = {};
    queue.add(chart, () => ran.push(1));
    clock.frame();
    queue.add(chart, () => ran.push(2));
    clock.frame();
    expect(ran).toEqual([1, 2]);
  });
});
