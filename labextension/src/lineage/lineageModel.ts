import type { IDisposable } from '@lumino/disposable';
import { ISignal, Signal } from '@lumino/signaling';

import type { ILineagePage, ILineageRecord, ILineageReplay, ILineageTrace } from '../comm/protocol';
import { IRunsSource, LONG_REQUEST_TIMEOUT, RunsModel } from '../runs/model';
import type { DebugModel } from '../timetravel/debugModel';
import { message } from '../timetravel/timelineModel';

/** Records per page of the outputs and of a trace. */
export const LINEAGE_PAGE = 20;

export type Direction = 'back' | 'forward';

/** A trace shown: the kernel's reply, and the page of its records on view. */
export interface IShownTrace {
  trace: ILineageTrace;
  page: ILineagePage;
}

/** A lineage request that failed: what was asked, the kernel's message and its type. */
export interface ILineageError {
  action: string;
  type: string;
  message: string;
}

/** Whether two records are the same one (same operator and id). */
export function sameRecord(a: ILineageRecord | null, b: ILineageRecord | null): boolean {
  return !!a && !!b && a.operator === b.operator && a.partition === b.partition && a.position === b.position;
}

/**
 * The Lineage view's state for the selected run (Titian): the cell's output rows (paged,
 * filtered), the backward trace of the row picked (its path and source records), the
 * forward trace of a source record picked, and "jump here" through the debugger. Every
 * action is one comm request (`lineage.*`, `debug.jump_to`); no DOM: views listen to
 * `changed`.
 */
export class LineageModel implements IDisposable {
  constructor(runs: RunsModel, source: IRunsSource, debug: DebugModel) {
    this._runs = runs;
    this._source = source;
    this._debug = debug;
    runs.changed.connect(this._onRuns, this);
    this._onRuns();
  }

  get changed(): ISignal<this, void> {
    return this._changed;
  }

  get runId(): string | null {
    return this._runId;
  }

  /** Whether the selected run has ended (lineage is traced after the run). */
  get available(): boolean {
    return this._runId !== null && this._status !== null && this._status !== 'running';
  }

  /** The cell's last operator and the page of its output rows on view, once loaded. */
  get outputs(): { operator: string; page: ILineagePage } | null {
    return this._outputs;
  }

  get filter(): string {
    return this._filter;
  }

  /** The output row traced back, and its trace. */
  get row(): ILineageRecord | null {
    return this._back?.trace.from ?? null;
  }

  get back(): IShownTrace | null {
    return this._back;
  }

  get forward(): IShownTrace | null {
    return this._forward;
  }

  /** What the kernel is doing for the view ("trace back"), or null. */
  get busy(): string | null {
    return this._busy;
  }

  get error(): ILineageError | null {
    return this._error;
  }

  get isDisposed(): boolean {
    return this._isDisposed;
  }

  /**
   * The view is on screen: load the output rows the first time (not before, as they are
   * regenerated with Spark), or once the run has ended.
   */
  show(): void {
    if (this._loaded) {
      return;
    }
    if (!this.available) {
      this._wanted = this._runId !== null;
      return;
    }
    this._loaded = true;
    void this.loadOutputs(0);
  }

  /** Load a page of the output rows (with the current filter). */
  async loadOutputs(start = 0): Promise<void> {
    const run = this._runId;
    if (run === null || !this.available) {
      return;
    }
    const filter = this._filter;
    const token = ++this._outputsToken;
    await this._ask('load the output rows', run, async () => {
      const params = { run, start, size: LINEAGE_PAGE, ...(filter ? { filter } : {}) };
      const result = await this._source.request('lineage.outputs', params, LONG_REQUEST_TIMEOUT);
      if (token === this._outputsToken) {
        this._outputs = { operator: result.operator, page: result.page };
      }
    });
  }

  /** Show only the output rows whose text contains `text` (any case). */
  setFilter(text: string): Promise<void> {
    if (text === this._filter) {
      return Promise.resolve();
    }
    this._filter = text;
    return this.loadOutputs(0);
  }

  /** The backward trace of an output row: its path and its source records. */
  traceBack(row: ILineageRecord): Promise<void> {
    return this._trace('back', `trace back ${row.operator} #${row.position} on partition ${row.partition}`, run =>
      this._source.request(
        'lineage.trace_back',
        { run, partition: row.partition, position: row.position, size: LINEAGE_PAGE, source: 'sidebar' },
        LONG_REQUEST_TIMEOUT
      )
    );
  }

  /** The forward trace of a source record: the output rows it went into. */
  traceForward(record: ILineageRecord): Promise<void> {
    const { operator, partition, position } = record;
    return this._trace('forward', `trace forward ${operator} #${position} on partition ${partition}`, run =>
      this._source.request(
        'lineage.trace_forward',
        { run, operator, partition, position, size: LINEAGE_PAGE, source: 'sidebar' },
        LONG_REQUEST_TIMEOUT
      )
    );
  }

  /** Another page of a trace's records: where it ends, or at `operator` on its path. */
  async showRecords(direction: Direction, start: number, operator: string | null = null): Promise<void> {
    const run = this._runId;
    const shown = direction === 'back' ? this._back : this._forward;
    if (run === null || !shown) {
      return;
    }
    const trace = shown.trace.trace;
    await this._ask(`show the records${operator ? ` at ${operator}` : ''}`, run, async () => {
      const params = { run, trace, start, size: LINEAGE_PAGE, ...(operator ? { operator } : {}) };
      const result = await this._source.request('lineage.records', params, LONG_REQUEST_TIMEOUT);
      const now = direction === 'back' ? this._back : this._forward;
      if (now && now.trace.trace === trace) {
        this._set(direction, { trace: now.trace, page: result.page });
      }
    });
  }

  /** "Replay only these": the cell's operators re-run on the backward trace's sources (`t.replay()`). */
  async replay(): Promise<void> {
    const run = this._runId;
    const back = this._back;
    if (run === null || !back) {
      return;
    }
    const trace = back.trace.trace;
    await this._ask('replay only these', run, async () => {
      const params = { run, trace, size: LINEAGE_PAGE, source: 'sidebar' as const };
      const result = await this._source.request('lineage.replay', params, LONG_REQUEST_TIMEOUT);
      if (this._back?.trace.trace === trace) {
        this._replayed = result;
      }
    });
  }

  /** The selective replay of the backward trace on view, once asked for. */
  get replayed(): ILineageReplay | null {
    return this._replayed;
  }

  /** Jump the debugger to when θ received the record (a record of the trace `direction`). */
  async jumpTo(direction: Direction, record: ILineageRecord): Promise<void> {
    const shown = direction === 'back' ? this._back : this._forward;
    if (!shown) {
      return;
    }
    this._jumped = record;
    this._changed.emit();
    await this._debug.jumpTo(shown.trace.trace, record);
  }

  /** The record "Jump here" was last clicked on. */
  get jumped(): ILineageRecord | null {
    return this._jumped;
  }

  dispose(): void {
    if (this._isDisposed) {
      return;
    }
    this._isDisposed = true;
    this._runs.changed.disconnect(this._onRuns, this);
    Signal.clearData(this);
  }

  private async _trace(direction: Direction, action: string, call: (run: string) => Promise<ILineageTrace>) {
    const run = this._runId;
    if (run === null || !this.available) {
      return;
    }
    await this._ask(action, run, async () => {
      const trace = await call(run);
      this._set(direction, { trace, page: trace.page });
      if (direction === 'back') {
        this._forward = null; // it belonged to the previous trace's records
        this._replayed = null;
      }
    });
  }

  private _set(direction: Direction, shown: IShownTrace): void {
    if (direction === 'back') {
      this._back = shown;
    } else {
      this._forward = shown;
    }
  }

  /** Run one request as the view's busy action; its error is kept for the view. */
  private async _ask(action: string, run: string, work: () => Promise<void>): Promise<void> {
    this._busy = action;
    this._error = null;
    this._changed.emit();
    try {
      await work();
      if (run === this._runId) {
        this._busy = null;
        this._changed.emit();
      }
    } catch (reason) {
      if (run === this._runId) {
        const type = (reason as { type?: string })?.type ?? 'internal';
        this._busy = null;
        this._error = { action, type, message: message(reason) };
        this._changed.emit();
      }
    }
  }

  private _onRuns(): void {
    const runs = this._runs;
    const id = runs.state === 'ready' ? runs.selectedId : null;
    const status = runs.selected?.status ?? runs.runs.find(r => r.id === id)?.status ?? null;
    if (id !== this._runId) {
      // A view that showed the previous run's rows wants the next run's too.
      this._wanted = this._wanted || this._loaded;
      this._loaded = false;
      this._runId = id;
      this._status = status;
      this._outputs = null;
      this._back = null;
      this._forward = null;
      this._jumped = null;
      this._replayed = null;
      this._error = null;
      this._busy = null;
      this._filter = '';
      this._outputsToken++;
      this._changed.emit();
    } else if (status !== this._status) {
      this._status = status;
      this._changed.emit();
    }
    if (this._wanted && this.available) {
      this._wanted = false;
      this.show();
    }
  }

  private _runs: RunsModel;
  private _source: IRunsSource;
  private _debug: DebugModel;
  private _runId: string | null = null;
  private _status: string | null = null;
  private _outputs: { operator: string; page: ILineagePage } | null = null;
  private _filter = '';
  private _back: IShownTrace | null = null;
  private _forward: IShownTrace | null = null;
  private _jumped: ILineageRecord | null = null;
  private _replayed: ILineageReplay | null = null;
  private _busy: string | null = null;
  private _error: ILineageError | null = null;
  private _outputsToken = 0;
  private _loaded = false;
  private _wanted = false;
  private _isDisposed = false;
  private _changed = new Signal<this, void>(this);
}
