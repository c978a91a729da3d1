import { ISignal, Signal } from '@lumino/signaling';

import type { IEventMessage, ISkewFlag, ISkewKey, ISkewReport } from '../comm/protocol';
import { IClock, realClock } from '../comm/throttle';
import { IRunsSource, LONG_REQUEST_TIMEOUT, RunsModel } from '../runs/model';
import { SelectedRunResource } from '../runs/selectedRunResource';

/** While a run records, its skew report is fetched again at most this often (ms). */
export const SKEW_LIVE_INTERVAL = 500;

/**
 * The skew report of the selected run (`skew.report`, one call of `run.skew(op)`): the
 * operator shown, its partitions' loads, heavy keys, flags and advice, and the chart's
 * spec. While the run records it is fetched again on its progress events (at most
 * every `SKEW_LIVE_INTERVAL` ms), and once more when it ends. A click on a bar selects a
 * partition: `partitionKeys` are its heavy keys. No DOM: views listen to `changed`.
 */
export class SkewModel extends SelectedRunResource {
  constructor(runs: RunsModel, source: IRunsSource, clock: IClock = realClock) {
    super(runs, source, SKEW_LIVE_INTERVAL, clock);
    this.start();
  }

  /** The report shown (null: none yet, or no run). */
  get report(): ISkewReport | null {
    return this._report;
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
      this.changedSignal.emit();
      if (partition !== null) {
        this._partitionSelected.emit(partition);
      }
    }
  }

  protected fetch(run: string): Promise<unknown> {
    const params = this._operator === null ? { run } : { run, operator: this._operator };
    return this.source.request('skew.report', params, LONG_REQUEST_TIMEOUT);
  }

  protected apply(result: unknown): void {
    const report = result as ISkewReport;
    this._report = report;
  }

  protected reset(): void {
    this._report = null;
    this._operator = null;
    this._partition = null;
  }

  protected onEvent(message: IEventMessage): void {
    if (message.event === 'run.progress') {
      this.live.schedule();
    }
  }

  /** The operator the user picked; null: the kernel's default, asked for again each
   * time (while the run records an operator can be renamed: `setName` after its
   * function's name). */
  private _operator: string | null = null;
  private _report: ISkewReport | null = null;
  private _partition: number | null = null;
  private _partitionSelected = new Signal<this, number>(this);
}
