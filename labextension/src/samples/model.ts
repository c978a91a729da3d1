import { ISignal, Signal } from '@lumino/signaling';

import type { ISampleResult } from '../comm/protocol';
import { LONG_REQUEST_TIMEOUT, RunsModel } from '../runs/model';

/** An edge of the run's DAG: `[upstream, downstream]`; its sample is the downstream's input. */
export type Edge = readonly [string, string];

/**
 * The edges of the selected run's DAG into Python operators, and the sample of the one
 * opened (`run.samples(operator)`: `--agent samples`). No DOM: views listen to `changed`.
 */
export class SamplesModel {
  constructor(readonly runs: RunsModel) {
    runs.changed.connect(this._onRuns, this);
  }

  get changed(): ISignal<this, void> {
    return this._changed;
  }

  /** The edges whose downstream operator is a Python one (it has a sample). */
  get edges(): Edge[] {
    const dag = this.runs.selected?.dag;
    if (!dag) {
      return [];
    }
    const python = new Set(dag.operators.filter(op => op.kind === 'python').map(op => op.name));
    return dag.edges.filter(([, down]) => python.has(down));
  }

  get opened(): Edge | null {
    return this._opened;
  }

  get sample(): ISampleResult | null {
    return this._sample;
  }

  get error(): string | null {
    return this._error;
  }

  /** Open an edge's sample (again: close it). */
  async open(edge: Edge): Promise<void> {
    const same = this._opened !== null && this._opened[0] === edge[0] && this._opened[1] === edge[1];
    this._opened = same ? null : edge;
    await this._fetch();
  }

  /** The opened edge's sample in the selected run. */
  private async _fetch(): Promise<void> {
    const run = this.runs.selectedId;
    const edge = this._opened;
    this._sample = null;
    this._error = null;
    this._changed.emit();
    if (run === null || edge === null) {
      return;
    }
    try {
      const sample = await this.runs.request('samples.get', { run, operator: edge[1] }, LONG_REQUEST_TIMEOUT);
      if (this._opened === edge && this.runs.selectedId === run) {
        this._sample = sample;
      }
    } catch (reason) {
      this._error = reason instanceof Error ? reason.message : String(reason);
    }
    this._changed.emit();
  }

  dispose(): void {
    Signal.clearData(this);
  }

  private _onRuns(): void {
    const key = this.runs.selectedId ?? '';
    if (key !== this._seen) {
      this._seen = key; // another run: the same edge stays open, with that run's sample
      void this._fetch();
      return;
    }
    this._changed.emit();
  }

  private _opened: Edge | null = null;
  private _sample: ISampleResult | null = null;
  private _error: string | null = null;
  private _seen = '';
  private _changed = new Signal<this, void>(this);
}
