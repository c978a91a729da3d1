import { ISignal, Signal } from '@lumino/signaling';

import type { IAlertGroup, IEventMessage } from '../comm/protocol';
import { IClock, LIVE_INTERVAL, realClock } from '../comm/throttle';
import { IRunsSource, LONG_REQUEST_TIMEOUT, RunsModel } from '../runs/model';
import { SelectedRunResource } from '../runs/selectedRunResource';
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
 * sidebar follows it.
 */
export class AlertsModel extends SelectedRunResource {
  constructor(runs: RunsModel, source: IRunsSource, clock: IClock = realClock) {
    super(runs, source, LIVE_INTERVAL, clock);
    this.start();
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

  protected fetch(run: string): Promise<unknown> {
    return this.source.request('alerts.groups', { run }, LONG_REQUEST_TIMEOUT);
  }

  protected apply(result: unknown): void {
    const { groups, total } = result as { groups: IAlertGroup[]; total: number };
    this._groups = groups;
    this._total = total;
  }

  protected reset(): void {
    this._groups = [];
    this._total = 0;
    this._seen = false;
  }

  protected onEvent(message: IEventMessage): void {
    if (message.event !== 'run.alert') {
      return;
    }
    if (!this._seen && this._groups.length === 0) {
      this._seen = true;
      this._firstArrived.emit();
    }
    this.live.schedule();
  }

  private _groups: IAlertGroup[] = [];
  private _total = 0;
  private _seen = false;
  private _firstArrived = new Signal<this, void>(this);
}
