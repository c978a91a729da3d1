import { ISignal, Signal } from '@lumino/signaling';

import type { IEventData, IEventMessage, ISkewFlag, ISkewKey, ISkewReport } from '../comm/protocol';
import { IClock, realClock } from '../comm/throttle';
import { IRunsSource, LONG_REQUEST_TIMEOUT, RunsModel } from '../runs/model';
import { SelectedRunResource } from '../runs/selectedRunResource';
import { applyChanges, IChartRows } from './liveRows';

/** While a run records, its skew report is fetched again at most this often (ms). */
export const SKEW_LIVE_INTERVAL = 500;

/**
 * The skew report of the selected run (`skew.report`, one call of `run.skew(op)`): the
 * operator shown, its partitions' loads, heavy keys, flags and advice, and the chart's
 * spec. While a --skew run records the kernel pushes it (`skew.changed`: the whole
 * report, then the rows that changed, which the charts apply as `chartRows`); a run
 * without pushes is fetched again on its progress events (at most every
 * `SKEW_LIVE_INTERVAL` ms). Once more when it ends. A click on a bar selects a
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

  /** Emitted with a pushed change's rows of a chart, before `changed`: a drawn chart
   * changes only these (its spec's dataset is already up to date). */
  get chartRows(): ISignal<this, IChartRows> {
    return this._chartRows;
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
    this._pushed = false;
    this._operator = null;
    this._partition = null;
  }

  protected onEvent(message: IEventMessage): void {
    if (message.event === 'run.progress' && !this._pushed) {
      this.live.schedule();
    } else if (message.event === 'skew.changed') {
      this._pushed = true;
      this._onPushed(message.data);
    }
  }

  /** A pushed report or change of the operator shown; one that does not follow from
   * the report shown (another operator, none yet) asks for the whole report. */
  private _onPushed(data: IEventData['skew.changed']): void {
    const wanted = this._operator ?? data.operator;
    if (data.operator !== wanted) {
      return; // the kernel pushes the operator picked once it has been asked for it
    }
    if (data.report !== null) {
      this._report = data.report;
    } else if (data.changes !== null && this._report?.live && this._report.operator === data.operator) {
      const [report, charts] = applyChanges(this._report, data.changes);
      this._report = report;
      charts.forEach(rows => this._chartRows.emit(rows));
    } else {
      this.live.schedule();
      return;
    }
    this.changedSignal.emit();
  }

  /** The operator the user picked; null: the kernel's default, asked for again each
   * time (while the run records an operator can be renamed: `setName` after its
   * function's name). */
  private _operator: string | null = null;
  private _report: ISkewReport | null = null;
  private _partition: number | null = null;
  private _partitionSelected = new Signal<this, number>(this);
  private _chartRows = new Signal<this, IChartRows>(this);
  /** The kernel pushes this run's report (`skew.changed`): no fetch on progress. */
  private _pushed = false;
}
