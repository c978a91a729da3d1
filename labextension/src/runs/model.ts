import type { IDisposable } from '@lumino/disposable';
import { ISignal, Signal } from '@lumino/signaling';

import type { ClientState } from '../comm/client';
import {
  IEventMessage,
  IPartitionRow,
  IRequestParams,
  IRequestResults,
  IRunListItem,
  IRunSummary,
  RequestMethod
} from '../comm/protocol';

/** What the model needs of `IcedteaClient`. */
export interface IRunsSource {
  readonly state: ClientState;
  readonly stateChanged: ISignal<unknown, ClientState>;
  readonly event: ISignal<unknown, IEventMessage>;
  /** `timeout` (ms) for requests whose work grows with the run (a thousand interactions). */
  request<M extends RequestMethod>(method: M, params: IRequestParams[M], timeout?: number): Promise<IRequestResults[M]>;
}

/**
 * Milliseconds to wait for the replies of run requests: their work grows with the size
 * of a run, and the kernel answers the comm's requests one at a time, so a quick one can
 * wait behind a slow one (the interactions of a large run).
 */
export const LONG_REQUEST_TIMEOUT = 120_000;

/**
 * The runs of the followed kernel and the summary of the selected one, kept up to
 * date from the comm's events. No DOM: views listen to `changed`.
 */
export class RunsModel implements IDisposable {
  constructor(source: IRunsSource) {
    this._source = source;
    source.stateChanged.connect(this._onState, this);
    source.event.connect(this._onEvent, this);
    if (source.state === 'ready') {
      void this.refresh();
    }
  }

  /** Emitted after any change of the runs, the selection, the summary or the state. */
  get changed(): ISignal<this, void> {
    return this._changed;
  }

  /** The state of the comm (see `ClientState`). */
  get state(): ClientState {
    return this._source.state;
  }

  /** Runs of the kernel, newest first. */
  get runs(): readonly IRunListItem[] {
    return this._runs;
  }

  get selectedId(): string | null {
    return this._selectedId;
  }

  /** Summary of the selected run, once fetched. */
  get selected(): IRunSummary | null {
    return this._summary && this._summary.id === this._selectedId ? this._summary : null;
  }

  /** The last failed request, for the views to show; cleared by the next success. */
  get lastError(): string | null {
    return this._lastError;
  }

  get isDisposed(): boolean {
    return this._isDisposed;
  }

  /** Reload the list of runs and the selected run's summary. */
  async refresh(): Promise<void> {
    const token = ++this._listToken;
    try {
      const { runs } = await this._source.request('runs.list', {}, LONG_REQUEST_TIMEOUT);
      if (token !== this._listToken || this._isDisposed) {
        return;
      }
      this._runs = sortRuns(runs);
      this._lastError = null;
      const keep = this._selectedId !== null && this._runs.some(r => r.id === this._selectedId);
      const target = keep && !this._followNewest ? this._selectedId : (this._runs[0]?.id ?? null);
      this._changed.emit();
      await this._load(target);
    } catch (reason) {
      this._fail(reason);
    }
  }

  /** Select a run (a click in the list); selecting the newest follows new runs again. */
  async select(id: string): Promise<void> {
    this._followNewest = this._runs.length > 0 && this._runs[0].id === id;
    await this._load(id);
  }

  /** A request on the followed kernel's comm (for the views of other features). */
  request<M extends RequestMethod>(
    method: M,
    params: IRequestParams[M],
    timeout?: number
  ): Promise<IRequestResults[M]> {
    return this._source.request(method, params, timeout);
  }

  /** Per-partition rows of one operator of the selected run, fetched on demand. */
  async partitions(operator: string): Promise<IPartitionRow[]> {
    const run = this._selectedId;
    if (run === null) {
      return [];
    }
    const result = await this._source.request('run.partitions', { run, operator }, LONG_REQUEST_TIMEOUT);
    return result.partitions;
  }

  dispose(): void {
    if (this._isDisposed) {
      return;
    }
    this._isDisposed = true;
    this._source.stateChanged.disconnect(this._onState, this);
    this._source.event.disconnect(this._onEvent, this);
    Signal.clearData(this);
  }

  /** Fetch and select a run's summary (null clears the selection). */
  private async _load(id: string | null): Promise<void> {
    const token = ++this._summaryToken;
    if (id !== this._selectedId) {
      this._selectedId = id;
      this._changed.emit();
    }
    if (id === null) {
      this._summary = null;
      return;
    }
    try {
      const summary = await this._source.request('run.get', { run: id }, LONG_REQUEST_TIMEOUT);
      if (token !== this._summaryToken || this._isDisposed) {
        return;
      }
      this._summary = summary;
      this._lastError = null;
      // The list item was made when the run started, before its DAG was known.
      this._updateItem(id, { operators: summary.dag.operators.filter(op => op.kind === 'python').length });
      this._changed.emit();
    } catch (reason) {
      if (token === this._summaryToken) {
        this._fail(reason);
      }
    }
  }

  private _onState(source: unknown, state: ClientState): void {
    if (state === 'ready') {
      void this.refresh();
      return;
    }
    // Another kernel, a restart or no extension: what we showed is gone.
    this._listToken++;
    this._summaryToken++;
    this._runs = [];
    this._summary = null;
    this._selectedId = null;
    this._followNewest = true;
    this._lastError = null;
    this._changed.emit();
  }

  private _onEvent(source: unknown, message: IEventMessage): void {
    switch (message.event) {
      case 'run.added': {
        const item = message.data.run;
        this._runs = sortRuns([item, ...this._runs.filter(r => r.id !== item.id)]);
        this._changed.emit();
        if (this._followNewest || this._selectedId === null) {
          void this._load(this._runs[0].id);
        }
        break;
      }
      case 'run.progress': {
        const { run, status, duration, progress } = message.data;
        this._updateItem(run, { status, duration });
        if (this._summary && this._summary.id === run) {
          this._summary = { ...this._summary, status, duration, progress };
          // Operators the summary's DAG does not know yet (it was fetched as the cell
          // started): fetch it again, for θ and G(θ), at most once a second.
          const known = new Set(this._summary.dag.operators.map(op => op.name));
          if (progress.some(p => !known.has(p.operator)) && Date.now() - this._dagFetched > 1000) {
            this._dagFetched = Date.now();
            void this._load(run);
          }
        }
        this._changed.emit();
        break;
      }
      case 'run.status': {
        const { run, status, error, warnings } = message.data;
        this._updateItem(run, { status });
        if (this._summary && this._summary.id === run) {
          this._summary = { ...this._summary, status, error, warnings };
        }
        this._changed.emit();
        // The end time, final counts and alerts come with a fresh list and summary.
        void this.refresh();
        break;
      }
      case 'run.alert': {
        const { run, alert } = message.data;
        if (this._summary && this._summary.id === run) {
          this._summary = { ...this._summary, alerts: [...this._summary.alerts, alert] };
          this._changed.emit();
        }
        break;
      }
    }
  }

  private _updateItem(id: string, change: Partial<IRunListItem>): void {
    this._runs = this._runs.map(r => (r.id === id ? { ...r, ...change } : r));
  }

  private _fail(reason: unknown): void {
    if (this._isDisposed) {
      return;
    }
    this._lastError = reason instanceof Error ? reason.message : String(reason);
    this._changed.emit();
  }

  private _source: IRunsSource;
  private _runs: IRunListItem[] = [];
  private _selectedId: string | null = null;
  private _summary: IRunSummary | null = null;
  private _followNewest = true;
  private _lastError: string | null = null;
  private _listToken = 0;
  private _summaryToken = 0;
  private _dagFetched = 0;
  private _isDisposed = false;
  private _changed = new Signal<this, void>(this);
}

/** Newest first (by start time, then id). */
function sortRuns(runs: IRunListItem[]): IRunListItem[] {
  return [...runs].sort((a, b) => b.started - a.started || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
}
