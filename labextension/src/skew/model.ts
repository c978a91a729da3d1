import type { IDisposable } from '@lumino/disposable';
import { ISignal, Signal } from '@lumino/signaling';

import type { IEventMessage, ISkewFlag, ISkewKey, ISkewReport } from '../comm/protocol';
import { IClock, realClock, Throttle } from '../comm/throttle';
import { IRunsSource, LONG_REQUEST_TIMEOUT, RunsModel } from '../runs/model';

/** While a run records, its skew report is fetched again at most this often (ms). */
export const SKEW_LIVE_INTERVAL = 500;

/**
 * The skew report of the selected run (`skew.report`, one call of `run.skew(op)`): the
 * operator shown, its partitions' loads, heavy keys, flags and advice, and the chart's
 * spec. While the run records it is fetched again on its progress events (at most
 * every `SKEW_LIVE_INTERVAL` ms), and once more when it ends. A click on a bar selects a
 * partition: `partitionKeys` are its heavy keys. No DOM: views listen to `changed`.
 */
export class SkewModel implements IDisposable {
  constructor(runs: RunsModel, source: IRunsSource, clock: IClock = realClock) {
    this._runs = runs;
    this._source = source;
    this._live = new Throttle(() => void this.refresh(), SKEW_LIVE_INTERVAL, clock);
    runs.changed.connect(this._onRuns, this);
    source.event.connect(this._onEvent, this);
    this._onRuns();
  }

  /** Emitted after any change of the report, the selection or the error. */
  get changed(): ISignal<this, void> {
    return this._changed;
  }

  /** The report shown (null: none yet, or no run). */
  get report(): ISkewReport | null {
    return this._report;
  }

  /** Why the last request failed (cleared by the next success). */
  get error(): string | null {
    return this._error;
  }

  /** The partition whose keys are shown (a click on its bar), or null. */
  get partition(): number | null {
    return this._partition;
  }

  /** The heavy keys of the selected partition, heaviest first (all keys: none selected). */
  get partitionKeys(): ISkewKey[] {
    const keys = this._report?.keys ?? [];
    return this._partition === null ? keys : keys.filter(k => k.partition === this._partition);
  }

  /** The flags of the selected partition (all flags: none selected). */
  get partitionFlags(): ISkewFlag[] {
    const flags = this._report?.skewed ?? [];
    return this._partition === null ? flags : flags.filter(f => f.partition === this._partition);
  }

  get isDisposed(): boolean {
    return this._isDisposed;
  }

  /** Show another operator of the run. */
  async setOperator(operator: string): Promise<void> {
    this._operator = operator;
    this._partition = null;
    await this.refresh();
  }

  /** Emitted when the user selects a partition (a click on its bar): time travel follows. */
  get partitionSelected(): ISignal<this, number> {
    return this._partitionSelected;
  }

  /** Select a partition (null: every partition). */
  selectPartition(partition: number | null): void {
    if (partition !== this._partition) {
      this._partition = partition;
      this._changed.emit();
      if (partition !== null) {
        this._partitionSelected.emit(partition);
      }
    }
  }

  /** Fetch the selected run's report again. */
  async refresh(): Promise<void> {
    const run = this._run;
    if (run === null || this._runs.state !== 'ready') {
      return;
    }
    const token = ++this._token;
    const params = this._operator === null ? { run } : { run, operator: this._operator };
    try {
      const report = await this._source.request('skew.report', params, LONG_REQUEST_TIMEOUT);
      if (token !== this._token || this._isDisposed) {
        return;
      }
      this._report = report;
      this._operator = report.operator;
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
    this._report = null;
    this._operator = null;
    this._partition = null;
    this._error = null;
    this._changed.emit();
    void this.refresh();
  }

  private _onEvent(sender: unknown, message: IEventMessage): void {
    if (message.event === 'run.progress' && message.data.run === this._run) {
      this._live.schedule();
    } else if (message.event === 'run.status' && message.data.run === this._run) {
      void this.refresh(); // the final report, from the store
    }
  }

  private _runs: RunsModel;
  private _source: IRunsSource;
  private _live: Throttle;
  private _run: string | null = null;
  private _operator: string | null = null;
  private _report: ISkewReport | null = null;
  private _partition: number | null = null;
  private _error: string | null = null;
  private _token = 0;
  private _isDisposed = false;
  private _changed = new Signal<this, void>(this);
  private _partitionSelected = new Signal<this, number>(this);
}
