import type { IDisposable } from '@lumino/disposable';
import { ISignal, Signal } from '@lumino/signaling';

import type { IEventMessage } from '../comm/protocol';
import { IClock, realClock, Throttle } from '../comm/throttle';
import { IRunsSource, RunsModel } from './model';

/**
 * One thing the kernel computes for the selected run (a skew report, the alerts' groups),
 * fetched when the selection changes, again live on the run's events (at most every
 * `interval` ms: `live.schedule()` from `onEvent`), and once more when it ends. A reply
 * to an older request or for another run is dropped; a failed request leaves `error`.
 * Subclasses say what to fetch (`fetch`), what a reply changes (`apply`) and what a new
 * selection resets (`reset`). No DOM: views listen to `changed`.
 */
export abstract class SelectedRunResource implements IDisposable {
  constructor(runs: RunsModel, source: IRunsSource, interval: number, clock: IClock = realClock) {
    this.runs = runs;
    this.source = source;
    this.live = new Throttle(() => void this._liveRefresh(), interval, clock);
    runs.changed.connect(this._onRuns, this);
    source.event.connect(this._onEvent, this);
  }

  /** Emitted after any change of what is shown or of the error. */
  get changed(): ISignal<this, void> {
    return this.changedSignal;
  }

  /** Why the last request failed (cleared by the next success). */
  get error(): string | null {
    return this._error;
  }

  get isDisposed(): boolean {
    return this._isDisposed;
  }

  /** Fetch the selected run's data again. */
  async refresh(): Promise<void> {
    const run = this.run;
    if (run === null || this.runs.state !== 'ready') {
      return;
    }
    const token = ++this._token;
    try {
      const result = await this.fetch(run);
      if (token !== this._token || this._isDisposed) {
        return;
      }
      this.apply(result);
      this._error = null;
    } catch (reason) {
      if (token !== this._token || this._isDisposed) {
        return;
      }
      this._error = reason instanceof Error ? reason.message : String(reason);
    }
    this.changedSignal.emit();
  }

  dispose(): void {
    if (this._isDisposed) {
      return;
    }
    this._isDisposed = true;
    this.live.dispose();
    this.runs.changed.disconnect(this._onRuns, this);
    this.source.event.disconnect(this._onEvent, this);
    Signal.clearData(this);
  }

  /** The request for `run`'s data. */
  protected abstract fetch(run: string): Promise<unknown>;

  /** Take a reply of `fetch`. */
  protected abstract apply(result: unknown): void;

  /** Forget the previous run's data (the selection changed). */
  protected abstract reset(): void;

  /** An event of the selected run (`run.status` has refreshed already). */
  protected onEvent(message: IEventMessage): void {
    void message; // none by default
  }

  /** Call from the subclass's constructor, once its fields are set: the first fetch. */
  protected start(): void {
    this._onRuns();
  }

  /** The selected run followed (null: none). */
  protected run: string | null = null;
  protected readonly runs: RunsModel;
  protected readonly source: IRunsSource;
  protected readonly live: Throttle;
  /** `changed`, for subclasses whose own actions change what is shown. */
  protected readonly changedSignal = new Signal<this, void>(this);

  private _onRuns(): void {
    const id = this.runs.state === 'ready' ? this.runs.selectedId : null;
    if (id === this.run) {
      return;
    }
    this.run = id;
    this._token++;
    this._error = null;
    this.reset();
    this.changedSignal.emit();
    void this.refresh();
  }

  /**
   * A live update. While one is in flight the next waits for its reply: a newer request
   * would drop it, and with replies slower than the interval (a busy kernel) none would
   * ever be shown until the run ended.
   */
  private async _liveRefresh(): Promise<void> {
    if (this._liveInFlight) {
      this._liveAgain = true;
      return;
    }
    this._liveInFlight = true;
    try {
      await this.refresh();
    } finally {
      this._liveInFlight = false;
    }
    if (this._liveAgain && !this._isDisposed) {
      this._liveAgain = false;
      this.live.schedule();
    }
  }

  private _onEvent(sender: unknown, message: IEventMessage): void {
    if (message.data.run !== this.run) {
      return;
    }
    if (message.event === 'run.status') {
      void this.refresh(); // the final data, from the store
    } else {
      this.onEvent(message);
    }
  }

  private _error: string | null = null;
  private _token = 0;
  private _isDisposed = false;
  private _liveInFlight = false;
  private _liveAgain = false;
}
