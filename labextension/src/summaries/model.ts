import { ISignal, Signal } from '@lumino/signaling';

import type { ISummaryComparison } from '../comm/protocol';
import { LONG_REQUEST_TIMEOUT, RunsModel } from '../runs/model';

/**
 * The selected run's summaries compared with an earlier run of its cell
 * (`run.summary_diff(other)`, `--agent summaries`): the latest earlier one unless the
 * user picks another. No DOM: views listen to `changed`.
 */
export class SummariesModel {
  constructor(readonly runs: RunsModel) {
    runs.changed.connect(this._onRuns, this);
    this._onRuns();
  }

  get changed(): ISignal<this, void> {
    return this._changed;
  }

  get comparison(): ISummaryComparison | null {
    return this._comparison;
  }

  get error(): string | null {
    return this._error;
  }

  get loading(): boolean {
    return this._loading;
  }

  /** Compare with `other` (a run id), or with the latest earlier run of the cell. */
  async compare(other?: string): Promise<void> {
    const run = this.runs.selectedId;
    if (run === null) {
      return;
    }
    this._loading = true;
    this._changed.emit();
    try {
      const params = other ? { run, other } : { run };
      const result = await this.runs.request('summaries.compare', params, LONG_REQUEST_TIMEOUT);
      if (result.run === this.runs.selectedId) {
        this._comparison = result;
      }
      this._error = null;
    } catch (reason) {
      this._error = reason instanceof Error ? reason.message : String(reason);
      this._comparison = null;
    }
    this._loading = false;
    if (!this._isDisposed) {
      this._changed.emit();
    }
  }

  dispose(): void {
    this._isDisposed = true;
    Signal.clearData(this);
  }

  private _onRuns(): void {
    const run = this.runs.selected;
    const key = run ? `${run.id}:${run.status}` : '';
    if (key !== this._seen && this.runs.state === 'ready') {
      this._seen = key;
      this._comparison = null;
      if (run && run.status !== 'running') {
        void this.compare();
      } else {
        this._changed.emit();
      }
    }
  }

  private _comparison: ISummaryComparison | null = null;
  private _error: string | null = null;
  private _loading = false;
  private _seen = '';
  private _isDisposed = false;
  private _changed = new Signal<this, void>(this);
}
