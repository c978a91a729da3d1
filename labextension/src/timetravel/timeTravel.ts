import type { IDisposable } from '@lumino/disposable';

import { DebugModel } from './debugModel';
import type { IRunsSource, RunsModel } from '../runs/model';
import { SnapshotModel } from './snapshotModel';
import { TimelineModel } from './timelineModel';

/**
 * The time-travel models of the selected run: its interaction timeline, its debugger
 * and the snapshot shown; they follow the runs model's selection and the run's status.
 */
export class TimeTravelModel implements IDisposable {
  constructor(runs: RunsModel, source: IRunsSource, options: TimelineModel.IOptions = {}) {
    this.runs = runs;
    this.debug = new DebugModel(source);
    this.timeline = new TimelineModel(source, this.debug, options);
    this.snapshot = new SnapshotModel(source, this.timeline, this.debug);
    runs.changed.connect(this._onRuns, this);
    this._onRuns();
  }

  readonly runs: RunsModel;
  readonly timeline: TimelineModel;
  readonly debug: DebugModel;
  readonly snapshot: SnapshotModel;

  get isDisposed(): boolean {
    return this._isDisposed;
  }

  dispose(): void {
    if (this._isDisposed) {
      return;
    }
    this._isDisposed = true;
    this.runs.changed.disconnect(this._onRuns, this);
    this.snapshot.dispose();
    this.timeline.dispose();
    this.debug.dispose();
  }

  private _onRuns(): void {
    const runs = this.runs;
    const id = runs.state === 'ready' ? runs.selectedId : null;
    // The status comes with the summary; until then the list item has it.
    const status = runs.selected?.status ?? runs.runs.find(r => r.id === id)?.status ?? null;
    // The debugger first: the timeline's change makes the snapshot look at both.
    this.debug.setRun(id, status);
    this.timeline.setRun(id, status);
  }

  private _isDisposed = false;
}
