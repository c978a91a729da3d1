/**
 * Live updates at a bounded rate: `schedule()` as often as events arrive, the callback
 * runs at once if it has not run for `interval` ms, else once at the end of the
 * interval (so the last update is never lost). The timers are injectable for tests.
 */

export interface IClock {
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export const realClock: IClock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: handle => clearTimeout(handle as ReturnType<typeof setTimeout>)
};

/** Live views redraw at most this often (ms). */
export const LIVE_INTERVAL = 250;

export class Throttle {
  constructor(
    private readonly _fn: () => void,
    private readonly _interval = LIVE_INTERVAL,
    private readonly _clock: IClock = realClock
  ) {}

  /** Whether a call waits for the end of the interval. */
  get pending(): boolean {
    return this._timer !== null;
  }

  /** Ask for a call: now, or at the end of the current interval. */
  schedule(): void {
    if (this._disposed || this._timer !== null) {
      return;
    }
    const wait = this._last + this._interval - this._clock.now();
    if (wait <= 0) {
      this._run();
    } else {
      this._timer = this._clock.setTimeout(() => {
        this._timer = null;
        this._run();
      }, wait);
    }
  }

  /** Run a waiting call now. */
  flush(): void {
    if (this._timer !== null) {
      this._clock.clearTimeout(this._timer);
      this._timer = null;
      this._run();
    }
  }

  /** Run now, whether a call waits or not (a user's action is not delayed). */
  fire(): void {
    if (this._disposed) {
      return;
    }
    if (this._timer !== null) {
      this._clock.clearTimeout(this._timer);
      this._timer = null;
    }
    this._run();
  }

  /** Drop a waiting call; later `schedule`s do nothing. */
  dispose(): void {
    this._disposed = true;
    if (this._timer !== null) {
      this._clock.clearTimeout(this._timer);
      this._timer = null;
    }
  }

  private _run(): void {
    this._last = this._clock.now();
    this._fn();
  }

  private _last = -Infinity;
  private _timer: unknown = null;
  private _disposed = false;
}
