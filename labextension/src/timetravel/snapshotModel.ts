import type { IDisposable } from '@lumino/disposable';
import { ISignal, Signal } from '@lumino/signaling';

import { DebugModel, viewKey } from './debugModel';
import { IRunsSource, LONG_REQUEST_TIMEOUT } from '../runs/model';
import type { IChanged, IPageResult, Tagged } from '../comm/protocol';
import { message, TimelineModel } from './timelineModel';
import { formatCount, plural, verb } from '../widgets/format';

/** One worker of a partition in the snapshot shown. */
export interface IWorkerCell {
  operator: string;
  /** Recorded snapshots: "running", "not started", "finished"...; the debugger: "replayed". */
  status: string;
  count: number | null;
}

/** One partition of G(θ) in the snapshot shown: its workers, upstream first. */
export interface ISnapshotPartition {
  partition: number;
  workers: IWorkerCell[];
}

/** The state of one worker of the selected partition, fetched on demand. */
export interface IWorkerState {
  operator: string;
  partition: number;
  loading: boolean;
  error: string | null;
  state: { [variable: string]: Tagged } | null;
  changed: IChanged | null;
  status: string | null;
  count: number | null;
  /**
   * The variables where the comparison starts (`SnapshotModel.comparison`): at the
   * interaction before, or before the last step; for "was …" next to what changed.
   */
  previous: { [variable: string]: Tagged } | null;
}

/**
 * What the highlighted changes are measured against: the interaction before the one
 * shown (a recorded snapshot, or the debugger just after a jump, backward or forward),
 * or the debugger's position before its last step; none for I0.
 */
export interface IComparison {
  kind: 'interaction' | 'step' | 'none';
  /** The interaction compared with (kind `interaction`). */
  index: number | null;
  /** For people: "Highlighted: changes since I1, the interaction before". */
  text: string;
}

export type SnapshotMode = 'debug' | 'recorded' | 'empty';

/**
 * What the snapshot view shows: the debugger's current view once it has jumped
 * (`debug.view`, `debug.moved`, states by `debug.state`), otherwise the recorded
 * snapshot of the selected interaction (`run.snapshot`, states by `run.state`).
 * Partitions are listed from the snapshot; states are fetched for the selected
 * partition only.
 */
export class SnapshotModel implements IDisposable {
  constructor(source: IRunsSource, timeline: TimelineModel, debug: DebugModel) {
    this._source = source;
    this._timeline = timeline;
    this._debug = debug;
    timeline.changed.connect(this._update, this);
    debug.changed.connect(this._update, this);
    this._update();
  }

  get changed(): ISignal<this, void> {
    return this._changed;
  }

  get mode(): SnapshotMode {
    return this._mode;
  }

  /** The interaction of a recorded snapshot, or the debugger's (null after steps). */
  get index(): number | null {
    return this._mode === 'debug' ? (this._debug.view?.index ?? null) : this._index;
  }

  /** One line saying what is shown. */
  get title(): string {
    if (this._mode === 'debug') {
      const view = this._debug.view!;
      return `Debugger: ${view.step}` + (view.index === null ? '' : ` (I${view.index})`);
    }
    if (this._mode === 'recorded') {
      const interaction = this._index === null ? undefined : this._timeline.interaction(this._index);
      const trigger = interaction ? ` (${interaction.trigger}${interaction.complete ? '' : ', incomplete'})` : '';
      return `Recorded snapshot I${this._index}${trigger}`;
    }
    return '';
  }

  /** What the highlighted changes compare with (null: nothing shown). */
  get comparison(): IComparison | null {
    if (this._mode === 'empty') {
      return null;
    }
    const index = this._mode === 'debug' ? (this._debug.view?.index ?? null) : this._index;
    if (this._mode === 'debug' && index === null) {
      return {
        kind: 'step',
        index: null,
        text: 'Highlighted: what the last step changed ("was": the value before it)'
      };
    }
    if (index === null || index <= 0) {
      return { kind: 'none', index: null, text: 'I0: the initial states, nothing earlier to compare with' };
    }
    return {
      kind: 'interaction',
      index: index - 1,
      text: `Highlighted: changes since I${index - 1}, the interaction before ("was": at I${index - 1})`
    };
  }

  /** Operators of G(θ) the snapshot holds, upstream first. */
  get operators(): readonly string[] {
    return this._operators;
  }

  get partitions(): readonly ISnapshotPartition[] {
    return this._partitions;
  }

  get selectedPartition(): number | null {
    return this._selected;
  }

  /** States of the selected partition's workers, in operator order. */
  get states(): readonly IWorkerState[] {
    return this._selected === null
      ? []
      : this._operators.map(op => this._states.get(cellKey(op, this._selected!))!).filter(Boolean);
  }

  get loading(): boolean {
    return this._loading;
  }

  get error(): string | null {
    return this._error;
  }

  get isDisposed(): boolean {
    return this._isDisposed;
  }

  /** Show the states of another partition. */
  selectPartition(partition: number): void {
    if (partition === this._selected || !this._partitions.some(p => p.partition === partition)) {
      return;
    }
    this._selected = partition;
    this._changed.emit();
    void this._fetchStates();
  }

  /**
   * One page of a large variable of a recorded snapshot (`run.page`); the debugger's
   * states arrive whole, and the view pages them itself.
   */
  async page(operator: string, variable: string, start: number, size: number): Promise<IPageResult> {
    const run = this._timeline.runId;
    if (this._mode !== 'recorded' || run === null || this._index === null || this._selected === null) {
      throw new Error('pages come from recorded snapshots');
    }
    return this._source.request(
      'run.page',
      { run, index: this._index, operator, partition: this._selected, variable, start, size },
      LONG_REQUEST_TIMEOUT
    );
  }

  dispose(): void {
    if (this._isDisposed) {
      return;
    }
    this._isDisposed = true;
    this._timeline.changed.disconnect(this._update, this);
    this._debug.changed.disconnect(this._update, this);
    Signal.clearData(this);
  }

  /** The timeline or the debugger changed: is it another snapshot? */
  private _update(): void {
    const run = this._timeline.runId;
    if (run !== this._runId) {
      this._runId = run;
      this._reset();
    }
    const view = this._debug.view;
    if (view && this._debug.runId === run) {
      const key = `debug|${viewKey(view)}`;
      if (key !== this._key) {
        this._previousKey = this._mode === 'debug' ? this._key : '';
        this._key = key;
        this._mode = 'debug';
        this._index = null;
        this._operators = [...view.chain];
        this._partitions = this._debugPartitions();
        const moved = this._debug.lastPartition;
        this._choosePartition(moved !== null && moved !== this._lastMoved ? moved : null);
        this._lastMoved = moved;
        this._error = null;
        this._changed.emit();
        void this._fetchStates();
      }
      return;
    }
    const index = this._timeline.selectedIndex;
    const interaction = index === null ? undefined : this._timeline.interaction(index);
    if (index === null || run === null) {
      if (this._mode !== 'empty') {
        this._reset();
        this._changed.emit();
      }
      return;
    }
    // While the run records, workers keep reporting: the snapshot is read again at its end.
    const key = `recorded|${index}|${interaction?.complete ?? false}|${this._timeline.running}`;
    if (key !== this._key) {
      this._key = key;
      this._mode = 'recorded';
      this._index = index;
      void this._loadSnapshot(run, index, key);
    }
  }

  private _reset(): void {
    this._mode = 'empty';
    this._key = '';
    this._previousKey = '';
    this._index = null;
    this._operators = [];
    this._partitions = [];
    this._selected = null;
    this._lastMoved = null;
    this._states.clear();
    this._shown.clear();
    this._error = null;
    this._loading = false;
    this._token++;
  }

  private _debugPartitions(): ISnapshotPartition[] {
    const debug = this._debug;
    return debug.partitions.map(partition => ({
      partition,
      workers: this._operators.map(operator => ({
        operator,
        status: 'replayed',
        count: debug.count(partition, operator)
      }))
    }));
  }

  private async _loadSnapshot(run: string, index: number, key: string): Promise<void> {
    const token = ++this._token;
    this._loading = true;
    this._changed.emit();
    try {
      const snapshot = await this._source.request('run.snapshot', { run, index }, LONG_REQUEST_TIMEOUT);
      if (token !== this._token || key !== this._key) {
        return;
      }
      const operators: string[] = [];
      const byPartition = new Map<number, IWorkerCell[]>();
      for (const w of snapshot.workers) {
        if (!operators.includes(w.operator)) {
          operators.push(w.operator);
        }
        let cells = byPartition.get(w.partition);
        if (!cells) {
          byPartition.set(w.partition, (cells = []));
        }
        cells.push({ operator: w.operator, status: w.status, count: w.count });
      }
      this._operators = operators;
      this._partitions = [...byPartition.entries()]
        .sort((a, b) => a[0] - b[0])
        .map(([partition, workers]) => ({ partition, workers }));
      this._choosePartition(null);
      this._error = null;
      this._loading = false;
      this._changed.emit();
      await this._fetchStates();
    } catch (reason) {
      if (token === this._token) {
        this._loading = false;
        this._error = `Cannot load snapshot I${index}: ${message(reason)}`;
        this._partitions = [];
        this._changed.emit();
      }
    }
  }

  /** Keep the selected partition if it is still there; prefer `moved` (the partition stepped). */
  private _choosePartition(moved: number | null): void {
    const has = (p: number | null) => p !== null && this._partitions.some(row => row.partition === p);
    if (has(moved)) {
      this._selected = moved;
    } else if (!has(this._selected)) {
      this._selected = this._partitions[0]?.partition ?? null;
    }
  }

  /** Fetch the states of the selected partition's workers for the snapshot shown. */
  private async _fetchStates(): Promise<void> {
    const run = this._runId;
    const partition = this._selected;
    const key = this._key;
    if (run === null || partition === null) {
      return;
    }
    const index = this._index;
    const comparison = this.comparison;
    const previousKey = this._previousKey;
    const fetches = this._operators.map(async operator => {
      const k = cellKey(operator, partition);
      const shown = this._shown.get(k);
      const cell: IWorkerState = {
        operator,
        partition,
        loading: true,
        error: null,
        state: null,
        changed: null,
        status: null,
        count: null,
        // After a step: the state the view showed at the position before it.
        previous: comparison?.kind === 'step' && shown && shown.key === previousKey ? shown.state : null
      };
      // Keep showing what was there while the new state is on its way.
      const old = this._states.get(k);
      if (old && old.partition === partition) {
        Object.assign(cell, { state: old.state, changed: old.changed, status: old.status, count: old.count });
      }
      this._states.set(k, cell);
      // A jump or a recorded snapshot compares with the interaction before (a jump
      // backward too): its recorded changes, and its recorded state for "was".
      const against = comparison?.kind === 'interaction' ? comparison.index! : null;
      const earlier =
        against === null
          ? null
          : this._source
              .request('run.state', { run, index: against, operator, partition }, LONG_REQUEST_TIMEOUT)
              .catch(() => null);
      try {
        if (this._mode === 'debug') {
          const jumped = this._debug.view?.index ?? null;
          const [result, recorded] = await Promise.all([
            this._source.request('debug.state', { run, operator, partition }, LONG_REQUEST_TIMEOUT),
            jumped !== null && against !== null
              ? this._source
                  .request('run.state', { run, index: jumped, operator, partition }, LONG_REQUEST_TIMEOUT)
                  .catch(() => null)
              : Promise.resolve(null)
          ]);
          Object.assign(cell, {
            state: result.state,
            // After a jump: what changed since the interaction before; after steps: the step's.
            changed: comparison?.kind === 'step' ? result.changed : (recorded?.changed ?? null),
            status: 'replayed',
            count: this._debug.count(partition, operator)
          });
        } else {
          const result = await this._source.request(
            'run.state',
            { run, index: index!, operator, partition },
            LONG_REQUEST_TIMEOUT
          );
          Object.assign(cell, {
            state: result.state,
            changed: result.changed,
            status: result.status,
            count: result.count
          });
        }
        if (comparison?.kind === 'none') {
          cell.changed = null;
        }
        const before = earlier ? await earlier : null;
        if (before) {
          cell.previous = before.state;
        }
        cell.error = null;
      } catch (reason) {
        cell.error = message(reason);
        cell.state = null;
        cell.changed = null;
      }
      cell.loading = false;
      if (key === this._key && this._states.get(k) === cell) {
        if (cell.state && !cell.error) {
          this._shown.set(k, { key, state: cell.state });
        }
        this._changed.emit();
      }
    });
    this._changed.emit();
    await Promise.all(fetches);
  }

  private _source: IRunsSource;
  private _timeline: TimelineModel;
  private _debug: DebugModel;
  private _runId: string | null = null;
  private _mode: SnapshotMode = 'empty';
  private _key = '';
  /** The key of the debugger's view before the current one (what its last step started from). */
  private _previousKey = '';
  private _index: number | null = null;
  private _operators: string[] = [];
  private _partitions: ISnapshotPartition[] = [];
  private _selected: number | null = null;
  private _lastMoved: number | null = null;
  private _states = new Map<string, IWorkerState>();
  /** The last state shown per worker, and the snapshot it was shown in. */
  private _shown = new Map<string, { key: string; state: { [variable: string]: Tagged } }>();
  private _loading = false;
  private _error: string | null = null;
  private _token = 0;
  private _isDisposed = false;
  private _changed = new Signal<this, void>(this);
}

function cellKey(operator: string, partition: number): string {
  return `${partition}\u0000${operator}`;
}

/** Under the listed waiting records: "… and 3 more records wait here (the first 20 are listed)". */
export function moreWaiting(count: number, listed: number): string {
  const more = count - listed;
  if (more <= 0) {
    return '';
  }
  return `… and ${plural(more, 'more record')} ${verb(more, 'waits', 'wait')} here, not listed (the first ${formatCount(listed)} are)`;
}
