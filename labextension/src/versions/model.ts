import { ISignal, Signal } from '@lumino/signaling';

import type { IRequestResults, IVersionDiff, IVersionRow } from '../comm/protocol';
import { LONG_REQUEST_TIMEOUT, RunsModel } from '../runs/model';

/**
 * The versions of the selected run's cell (`run.versions()`), the two chosen for a
 * comparison and their diff (`run.diff`), and the last export. No DOM: views listen to
 * `changed`.
 */
export class VersionsModel {
  constructor(readonly runs: RunsModel) {
    runs.changed.connect(this._onRuns, this);
    this._onRuns();
  }

  get changed(): ISignal<this, void> {
    return this._changed;
  }

  /** Oldest first. */
  get versions(): readonly IVersionRow[] {
    return this._versions;
  }

  /** The run ids chosen for a comparison: `[newer, older]` once two are chosen. */
  get chosen(): readonly string[] {
    return this._chosen;
  }

  get diff(): IVersionDiff | null {
    return this._diff;
  }

  /** What the last export wrote, or why it failed. */
  get exported(): IRequestResults['run.export'] | null {
    return this._exported;
  }

  get error(): string | null {
    return this._error;
  }

  /** Choose a version (a run id) for the comparison; a third choice drops the oldest. */
  toggle(run: string): void {
    this._chosen = this._chosen.includes(run) ? this._chosen.filter(r => r !== run) : [...this._chosen, run].slice(-2);
    this._diff = null;
    this._changed.emit();
    if (this._chosen.length === 2) {
      void this.compare();
    }
  }

  /** The diff of the two chosen versions, the later one against the earlier. */
  async compare(): Promise<void> {
    const order = this._versions.map(v => v.run);
    const [first, second] = [...this._chosen].sort((a, b) => order.indexOf(b) - order.indexOf(a));
    if (!first || !second) {
      return;
    }
    await this._ask(async () => {
      this._diff = await this.runs.request('versions.diff', { run: first, other: second }, LONG_REQUEST_TIMEOUT);
    });
  }

  /** Export the debugging session (`run.export_notebook`): the kernel exports the run
   * being debugged, the selected one if none is; its reply names the run. */
  async exportSession(path: string): Promise<void> {
    const run = this.runs.selectedId;
    if (run === null) {
      return;
    }
    await this._ask(async () => {
      this._exported = await this.runs.request('run.export', { run, path }, LONG_REQUEST_TIMEOUT);
    });
  }

  async refresh(): Promise<void> {
    const run = this.runs.selectedId;
    if (run === null) {
      this._versions = [];
      this._changed.emit();
      return;
    }
    await this._ask(async () => {
      const result = await this.runs.request('versions.list', { run }, LONG_REQUEST_TIMEOUT);
      if (result.run === this.runs.selectedId) {
        this._versions = result.versions;
        const known = new Set(result.versions.map(v => v.run));
        this._chosen = this._chosen.filter(r => known.has(r));
      }
    });
  }

  /** Stop following the runs (the view that owns the model is gone). */
  dispose(): void {
    this._isDisposed = true;
    Signal.clearData(this);
  }

  private async _ask(work: () => Promise<void>): Promise<void> {
    try {
      await work();
      this._error = null;
    } catch (reason) {
      this._error = reason instanceof Error ? reason.message : String(reason);
    }
    if (!this._isDisposed) {
      this._changed.emit();
    }
  }

  private _onRuns(): void {
    const run = this.runs.selected;
    const key = run ? `${run.id}:${run.status}` : '';
    if (key !== this._seen && this.runs.state === 'ready') {
      this._seen = key;
      if (run && run.status !== 'running') {
        void this.refresh();
      }
    }
  }

  private _versions: IVersionRow[] = [];
  private _chosen: string[] = [];
  private _diff: IVersionDiff | null = null;
  private _exported: IRequestResults['run.export'] | null = null;
  private _error: string | null = null;
  private _seen = '';
  private _isDisposed = false;
  private _changed = new Signal<this, void>(this);
}
