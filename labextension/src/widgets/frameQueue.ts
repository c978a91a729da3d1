/** How the queue waits: for the next animation frame, then for a task of its own. */
export interface IFrameClock {
  nextFrame(fn: () => void): void;
  nextTask(fn: () => void): void;
}

/** The browser's clock: `requestAnimationFrame`, then `setTimeout(0)`. */
export const browserFrames: IFrameClock = {
  nextFrame: fn => void requestAnimationFrame(() => fn()),
  nextTask: fn => void setTimeout(fn, 0)
};

/**
 * Heavy drawing spread over frames: one job a frame, each in a task of its own, just
 * after a frame was painted. Several charts drawn at once (a report's first arrival,
 * the final report, a resize) then cost a frame each, not one long frame of all of them
 * (three vega-embeds in one task took 170 ms at 200 partitions x 12 operators). A job
 * added again for the same owner before it ran keeps its place and runs once, the
 * latest. A job that throws does not stop the others.
 */
export class FrameQueue {
  constructor(private readonly _clock: IFrameClock = browserFrames) {}

  /** Jobs waiting. */
  get size(): number {
    return this._jobs.size;
  }

  /** Run `job` in a frame of its own, replacing `owner`'s job still waiting. */
  add(owner: object, job: () => void): void {
    this._jobs.set(owner, job); // a Map keeps the first insertion's place
    this._schedule();
  }

  /** Drop `owner`'s waiting job (its view is disposed). */
  cancel(owner: object): void {
    this._jobs.delete(owner);
  }

  private _schedule(): void {
    if (this._scheduled || this._jobs.size === 0) {
      return;
    }
    this._scheduled = true;
    this._clock.nextFrame(() => this._clock.nextTask(() => this._runOne()));
  }

  private _runOne(): void {
    this._scheduled = false;
    const next = this._jobs.entries().next();
    if (!next.done) {
      const [owner, job] = next.value;
      this._jobs.delete(owner);
      try {
        job();
      } catch (error) {
        console.error('icedtea: a drawing job failed', error);
      }
    }
    this._schedule();
  }

  private _jobs = new Map<object, () => void>();
  private _scheduled = false;
}

/** The sidebar's charts' draws and whole-data swaps, one a frame. */
export const chartFrames = new FrameQueue();
