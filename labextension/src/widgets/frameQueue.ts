/** How the queue waits: for the next animation frame, for a task of its own, for a time. */
export interface IFrameClock {
  nextFrame(fn: () => void): void;
  nextTask(fn: () => void): void;
  after(ms: number, fn: () => void): void;
}

/** The browser's clock: `requestAnimationFrame`, `setTimeout`. */
export const browserFrames: IFrameClock = {
  nextFrame: fn => void requestAnimationFrame(() => fn()),
  nextTask: fn => void setTimeout(fn, 0),
  after: (ms, fn) => void setTimeout(fn, ms)
};

/** The longest a job's promise holds the queue (ms): a job that never settles delays
 * the others by this much, not forever. */
export const JOB_WAIT = 2000;

/** The next step of a job in a frame of its own: after the next animation frame, in a
 * task of its own (a draw's steps chained by `setTimeout(0)` alone ran back to back in
 * one frame: 105 ms). */
export function nextFrame(clock: IFrameClock = browserFrames): Promise<void> {
  return new Promise(resolve => afterFrame(clock, resolve));
}

/** `fn` called after the next animation frame, in a task of its own (`nextFrame`'s
 * callback form: no promise, so nothing waits for a microtask). */
function afterFrame(clock: IFrameClock, fn: () => void): void {
  clock.nextFrame(() => clock.nextTask(fn));
}

/**
 * Heavy drawing spread over frames: one job at a time, each started in a task of its
 * own just after a frame was painted; a job that returns a promise (a draw in steps,
 * each after `nextFrame`) holds the queue until it settles, at most `JOB_WAIT` ms.
 * Several charts drawn at once (a report's first arrival, the final report, a resize)
 * then cost a frame a step, not one long frame of all of them (three vega-embeds in one
 * task took 170 ms at 200 partitions x 12 operators). A job added again for the same
 * owner before it ran keeps its place and runs once, the latest. A job that throws or
 * rejects does not stop the others.
 */
export class FrameQueue {
  constructor(private readonly _clock: IFrameClock = browserFrames) {}

  /** Jobs waiting (not the one running). */
  get size(): number {
    return this._jobs.size;
  }

  /** Run `job` after the jobs before it, replacing `owner`'s job still waiting. */
  add(owner: object, job: () => void | Promise<unknown>): void {
    this._jobs.set(owner, job); // a Map keeps the first insertion's place
    this._schedule();
  }

  /** Drop `owner`'s waiting job (its view is disposed). */
  cancel(owner: object): void {
    this._jobs.delete(owner);
  }

  private _schedule(): void {
    if (this._busy || this._jobs.size === 0) {
      return;
    }
    this._busy = true;
    afterFrame(this._clock, () => this._runOne());
  }

  private _runOne(): void {
    const next = this._jobs.entries().next();
    if (next.done) {
      this._done();
      return;
    }
    const [owner, job] = next.value;
    this._jobs.delete(owner);
    let running: unknown;
    try {
      running = job();
    } catch (error) {
      console.error('icedtea: a drawing job failed', error);
    }
    if (!(running instanceof Promise)) {
      this._done();
      return;
    }
    let settled = false;
    const settle = () => {
      if (!settled) {
        settled = true;
        this._done();
      }
    };
    running.then(settle, error => {
      console.error('icedtea: a drawing job failed', error);
      settle();
    });
    this._clock.after(JOB_WAIT, settle);
  }

  private _done(): void {
    this._busy = false;
    this._schedule();
  }

  private _jobs = new Map<object, () => void | Promise<unknown>>();
  private _busy = false;
}

/** The sidebar's charts' draws, whole-data swaps and pushed rows, one at a time. */
export const chartFrames = new FrameQueue();
