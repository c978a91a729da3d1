import type { IDisposable } from '@lumino/disposable';
import { ISignal, Signal } from '@lumino/signaling';

import type { IAlertGroup, IEventMessage } from '../comm/protocol';
import { IClock, LIVE_INTERVAL, realClock, Throttle } from '../comm/throttle';
import { IRunsSource, LONG_REQUEST_TIMEOUT, RunsModel } from '../runs/model';
import { formatCount } from '../widgets/format';

/** The section's title with the count of failures, e.g. `Alerts (12)`. */
export function alertsLabel(total: number): string {
  return total > 0 ? `Alerts (${formatCount(total)})` : 'Alerts';
}

/**
 * The alerts of the selected run, grouped by tool, check and operator
 * (`alerts.groups`, one call of `run.alert_groups()`). Fetched again on each
 * `run.alert` of that run (at most every `LIVE_INTERVAL` ms) and when it ends.
 * `firstArrived` fires when a run that had no alert gets its first one while the
 * sidebar follows it. No DOM: views listen to `changed`.
 */
export class AlertsModel implements IDisposable {
  constructor(runs: RunsModel, source: IRunsSource, clock: IClock = realClock) {
    this._runs = runs;
    this._source = source;
    this._live = new Throttle(() => void this.refresh(), LIVE_INTERVAL, clock);
    runs.changed.connect(this._onRuns, this);
    source.event.connect(this._onEvent, this);
    this._onRuns();
  }

  /** Emitted after any change of the groups or the error. */
  get changed(): ISignal<this, void> {
    return this._changed;
  }

  /** Emitted when the followed run's first alert arrives. */
  get firstArrived(): ISignal<this, void> {
    return this._firstArrived;
  }

  get groups(): readonly IAlertGroup[] {
    return this._groups;
  }

  /** The failures all groups stand for. */
  get total(): number {
    return this._total;
  }

  /** Why the last request failed (cleared by the next success). */
  get error(): string | null {
    return this._error;
  }

  get isDisposed(): boolean {
    return this._isDisposed;
  }

  /** Fetch the selected run's groups again. */
  async refresh(): Promise<void> {
    const run = this._run;
    if (run === null || this._runs.state !== 'ready') {
      return;
    }
    const token = ++this._token;
    try {
      const result = await this._source.request('alerts.groups', { run }, LONG_REQUEST_TIMEOUT);
      if (token !== this._token || this._isDisposed) {
        return;
      }
      this._groups = result.groups;
      this._total = result.total;
      this._error = null;
    } catch (reason) {
      if (token !== this._token || this._isDisposed) {
        return;
      }
      this._error = reason instanceof Error ? reason.message : String(reason);
    }
    this._changed.emit();
  }

  dispose(): void {
    if (this._isDisposed) {
      return;
    }
    this._isDisposed = true;
    this._live.dispose();
    this._runs.changed.disconnect(this._onRuns, this);
    this._source.event.disconnect(this._onEvent, this);
    Signal.clearData(this);
  }

  private _onRuns(): void {
    const id = this._runs.state === 'ready' ? this._runs.selectedId : null;
    if (id === this._run) {
      return;
    }
    this._run = id;
    this._token++;
    this._groups = [];
    this._total = 0;
    this._seen = false;
    this._error = null;
    this._changed.emit();
    void this.refresh();
  }

  private _onEvent(sender: unknown, message: IEventMessage): void {
    if (message.data.run !== this._run) {
      return;
    }
    if (message.event === 'run.alert') {
      if (!this._seen && this._groups.length === 0) {
        this._seen = true;
        this._firstArrived.emit();
      }
      this._live.schedule();
    } else if (message.event === 'run.status') {
      void this.refresh();
    }
  }

  private _runs: RunsModel;
  private _source: IRunsSource;
  private _live: Throttle;
  private _run: string | null = null;
  private _groups: IAlertGroup[] = [];
  private _total = 0;
  private _seen = false;
  private _error: string | null = null;
  private _token = 0;
  private _isDisposed = false;
  private _changed = new Signal<this, void>(this);
  private _firstArrived = new Signal<this, void>(this);
}
