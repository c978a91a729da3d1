import type { IDisposable } from '@lumino/disposable';
import { ISignal, Signal } from '@lumino/signaling';

import { RequestError } from '../comm/client';
import { IRunsSource, LONG_REQUEST_TIMEOUT } from '../runs/model';
import type { IAction, IDebugView, IEventMessage, IPendingAt, IReplayProgress, RunStatus } from '../comm/protocol';
import { pyRepr } from '../comm/tagged';
import { plural, verb } from '../widgets/format';
import { message } from './timelineModel';

/**
 * Milliseconds to wait for `debug.cancel`: the kernel answers it while the jump it
 * stops is still pending (the replay runs in another process).
 */
export const CANCEL_TIMEOUT = 5_000;

/** Whether a step button is enabled, and the tooltip that says what it does or why not. */
export interface IStepState {
  enabled: boolean;
  reason: string;
  /** Step into: the operator it steps into. */
  operator?: string;
}

/** A step or jump that failed: `type` is "refused" for a step that cannot be taken now. */
export interface IDebugError {
  type: string;
  message: string;
  /** What was asked: "step over on partition 0". */
  action: string;
  partition: number | null;
}

/**
 * The run's debugger as the kernel reports it (`DebugView`): after `debug.view`, the
 * replies to jumps and steps, and `debug.moved` events (steps taken from the panel or
 * Python code). Says which step buttons are possible and why others are not; keeps
 * the last error (a refused step) for the view to show inline. Cancels the jump or
 * step on its way (`debug.cancel`), and follows the preparation of time travel after
 * the run ended (`debug.progress`, then `debug.preparing` events).
 */
export class DebugModel implements IDisposable {
  constructor(source: IRunsSource) {
    this._source = source;
    source.event.connect(this._onEvent, this);
  }

  /** Emitted after the view, the busy state, the error, the progress or the action log changed. */
  get changed(): ISignal<this, void> {
    return this._changed;
  }

  get runId(): string | null {
    return this._runId;
  }

  /** The debugger's view, or null when it has not jumped yet (or the run still runs). */
  get view(): IDebugView | null {
    return this._view;
  }

  /** What the kernel is doing for us ("step over on partition 0"), or null. */
  get busy(): string | null {
    return this._busy;
  }

  /** Whether a `debug.cancel` of the busy action is on its way. */
  get cancelling(): boolean {
    return this._cancelling;
  }

  get error(): IDebugError | null {
    return this._error;
  }

  /**
   * The preparation of time travel for the run (fork checkpoints parked by a replay
   * after it ended), or null while unknown (the run records, or no debugger yet).
   */
  get progress(): IReplayProgress | null {
    return this._progress;
  }

  /** The partition of the last step (from the sidebar or, by its label, from elsewhere). */
  get lastPartition(): number | null {
    return this._lastPartition;
  }

  /** The run's action log: every UI and API action as its Python call. */
  get actions(): readonly IAction[] {
    return this._actions;
  }

  /** Whether the run has ended (the debugger needs an ended run). */
  get available(): boolean {
    return this._runId !== null && this._status !== null && this._status !== 'running';
  }

  get isDisposed(): boolean {
    return this._isDisposed;
  }

  /** The partitions the debugger replays, in order. */
  get partitions(): number[] {
    const view = this._view;
    if (!view) {
      return [];
    }
    const seen = new Set<number>(view.workers.map(w => w.partition));
    for (const key of Object.keys(view.pending)) {
      seen.add(Number(key));
    }
    return [...seen].filter(p => Number.isFinite(p)).sort((a, b) => a - b);
  }

  /** The records waiting at `operator` on `partition`. */
  pending(partition: number, operator: string): IPendingAt | null {
    return this._view?.pending[String(partition)]?.[operator] ?? null;
  }

  /** Records processed by `operator` on `partition` in the current view. */
  count(partition: number, operator: string): number | null {
    const worker = this._view?.workers.find(w => w.partition === partition && w.operator === operator);
    return worker ? worker.count : null;
  }

  /** Follow another run (or none), with its status. */
  setRun(id: string | null, status: RunStatus | null): void {
    const wasAvailable = this.available;
    if (id !== this._runId) {
      this._runId = id;
      this._view = null;
      this._viewKey = '';
      this._error = null;
      this._busy = null;
      this._cancelling = false;
      this._lastPartition = null;
      this._actions = [];
      this._progress = null;
      this._token++;
      this._progressToken++;
      this._status = status;
      this._changed.emit();
      if (id !== null) {
        void this._loadActions();
      }
    } else if (status !== this._status) {
      this._status = status;
      this._changed.emit();
    }
    if (this.available && !wasAvailable) {
      void this.refresh();
      void this._loadProgress();
    }
  }

  /** Ask the kernel where the run's debugger is (`debug.view`). */
  async refresh(): Promise<void> {
    const run = this._runId;
    if (run === null || !this.available) {
      return;
    }
    const token = ++this._token;
    try {
      const view = await this._source.request('debug.view', { run }, LONG_REQUEST_TIMEOUT);
      if (token === this._token && run === this._runId && view) {
        this._setView(view);
      }
    } catch (reason) {
      if (token === this._token && run === this._runId) {
        this._setError(reason, 'load the debugger', null);
      }
    }
  }

  /** Every worker of θ's chain as it was at interaction `index`. */
  jump(index: number): Promise<void> {
    return this._act(`jump to I${index}`, null, run =>
      this._source.request('debug.jump', { run, index, source: 'sidebar' }, LONG_REQUEST_TIMEOUT)
    );
  }

  /**
   * A failed run: θ's chain on the failing partition just before the culprit record
   * (`debug.jump_to_failure`); Over then reproduces the recorded exception.
   */
  jumpToFailure(): Promise<void> {
    return this._act('jump to the failure', null, run =>
      this._source.request('debug.jump_to_failure', { run, source: 'sidebar' }, LONG_REQUEST_TIMEOUT)
    );
  }

  /**
   * θ's chain just before θ receives the input record linked with a record of a lineage
   * trace the kernel keeps (`debug.jump_to`, `dbg.jump_to(record)`).
   */
  jumpTo(trace: number, record: { operator: string; partition: number; position: number }): Promise<void> {
    const { operator, partition, position } = record;
    return this._act(`jump to ${operator} #${position} on partition ${partition}`, null, run =>
      this._source.request(
        'debug.jump_to',
        { run, trace, operator, partition, position, source: 'sidebar' },
        LONG_REQUEST_TIMEOUT
      )
    );
  }

  /** θ's next record on `partition` and its whole scope. */
  stepOver(partition: number): Promise<void> {
    return this._act(`step over on partition ${partition}`, partition, run =>
      this._source.request('debug.step_over', { run, partition, source: 'sidebar' }, LONG_REQUEST_TIMEOUT)
    );
  }

  /** `operator` processes its next waiting record on `partition`. */
  stepInto(partition: number, operator: string): Promise<void> {
    return this._act(`step into ${operator} on partition ${partition}`, partition, run =>
      this._source.request('debug.step_into', { run, partition, operator, source: 'sidebar' }, LONG_REQUEST_TIMEOUT)
    );
  }

  /** The rest of the current scope on `partition`. */
  stepOut(partition: number): Promise<void> {
    return this._act(`step out on partition ${partition}`, partition, run =>
      this._source.request('debug.step_out', { run, partition, source: 'sidebar' }, LONG_REQUEST_TIMEOUT)
    );
  }

  /**
   * Stop the jump or step on its way (`debug.cancel`). Its pending request then fails
   * ("cancelled"), shown as an error, and the view stays as it was. Resolves whether
   * the kernel stopped something; does nothing unless a jump or step is on its way.
   */
  async cancel(): Promise<boolean> {
    const run = this._runId;
    const action = this._busy;
    if (run === null || action === null || this._cancelling) {
      return false;
    }
    this._cancelling = true;
    this._changed.emit();
    let stopped = false;
    try {
      const result = await this._source.request('debug.cancel', { run, source: 'sidebar' }, CANCEL_TIMEOUT);
      stopped = !!result?.cancelled;
    } catch (reason) {
      if (run === this._runId && this._busy === action) {
        this._setError(reason, `cancel ${action}`, null);
      }
    }
    // Stopped: `cancelling` lasts until the failed reply of the jump or step ends it.
    // Not stopped (it was about to end, or the cancel failed): Cancel can be tried again.
    if (!stopped && run === this._runId && this._cancelling) {
      this._cancelling = false;
      this._changed.emit();
    }
    return stopped;
  }

  /** Whether θ has `partition` (steps go by θ's partitions; later stages have others). */
  isThetaPartition(partition: number): boolean {
    const view = this._view;
    const theta = view?.chain[0];
    return !!view && view.workers.some(w => w.operator === theta && w.partition === partition);
  }

  /** Whether θ's tree on `partition` has ended: nothing is left to step over there. */
  ended(partition: number): boolean {
    return (this._view?.options.ended ?? []).includes(partition);
  }

  /**
   * Step over on `partition`: possible on θ's partitions unless the kernel refused it
   * (overlapping scopes) or θ's tree there has ended; the same data as the kernel's count.
   */
  stepOverState(partition: number): IStepState {
    const blocked = this._blocked();
    if (blocked) {
      return blocked;
    }
    const notTheta = this._notTheta(partition);
    if (notTheta) {
      return notTheta;
    }
    const refused = this._view!.options.refused[String(partition)];
    if (refused) {
      return { enabled: false, reason: refused };
    }
    if (this.ended(partition)) {
      return {
        enabled: false,
        reason: `θ has processed every record of partition ${partition} and its tree has ended: nothing is left to step over`
      };
    }
    const theta = this._view!.chain[0];
    const next = theta ? this.pending(partition, theta) : null;
    if (next && next.count > 0) {
      const record = next.records.length ? `: ${pyRepr(next.records[0], 80)}` : '';
      return { enabled: true, reason: `Step over θ's next record${record}, with its whole scope` };
    }
    return {
      enabled: true,
      reason: `θ has processed every record of partition ${partition}: step over ends the partition`
    };
  }

  /**
   * Step into `operator` on `partition`; without an operator, the deepest one of the
   * chain with a waiting record (the record being followed), else θ.
   */
  stepIntoState(partition: number, operator?: string): IStepState {
    const blocked = this._blocked();
    if (blocked) {
      return blocked;
    }
    const notTheta = this._notTheta(partition);
    if (notTheta) {
      return operator ? { ...notTheta, operator } : notTheta;
    }
    const chain = this._view!.chain;
    const target = operator ?? [...chain].reverse().find(op => (this.pending(partition, op)?.count ?? 0) > 0);
    if (!target) {
      return { enabled: false, reason: `No record waits on partition ${partition}` };
    }
    const waiting = this.pending(partition, target);
    if (!waiting || waiting.count === 0) {
      return { enabled: false, reason: `No record waits at ${target} on partition ${partition}`, operator: target };
    }
    const record = waiting.records.length ? `: ${pyRepr(waiting.records[0], 80)}` : '';
    return { enabled: true, reason: `${target} processes its next record${record}`, operator: target };
  }

  /** Step out on `partition`: possible while records of a scope wait downstream of θ. */
  stepOutState(partition: number): IStepState {
    const blocked = this._blocked();
    if (blocked) {
      return blocked;
    }
    const notTheta = this._notTheta(partition);
    if (notTheta) {
      return notTheta;
    }
    const waiting = this.waitingDownstream(partition);
    if (waiting === 0) {
      return {
        enabled: false,
        reason: `No scope is in progress on partition ${partition}: nothing waits downstream of θ`
      };
    }
    return {
      enabled: true,
      reason: `Finish the current scope: ${plural(waiting, 'record')} ${verb(waiting, 'waits', 'wait')} downstream of θ`
    };
  }

  /** Records of θ's scopes waiting at the operators after θ on `partition`. */
  waitingDownstream(partition: number): number {
    const view = this._view;
    if (!view) {
      return 0;
    }
    return view.chain.slice(1).reduce((n, op) => n + (this.pending(partition, op)?.count ?? 0), 0);
  }

  /**
   * How many partitions each step button is enabled on, from the same states as the
   * buttons (so the status line and the buttons agree).
   */
  stepCounts(): { partitions: number; over: number; into: number; out: number } {
    const partitions = this.partitions;
    const count = (state: (p: number) => IStepState) => partitions.filter(p => state(p).enabled).length;
    return {
      partitions: partitions.length,
      over: count(p => this.stepOverState(p)),
      into: count(p => this.stepIntoState(p)),
      out: count(p => this.stepOutState(p))
    };
  }

  /**
   * A few words beside a partition's buttons (they fit the sidebar's default width) when
   * step over is not possible there: refused (the ⚠: records of the current scope still
   * wait downstream), ended, or not one of θ's partitions; '' when it is possible. The
   * whole reason is in the note's tooltip and under the list for the selected partition.
   */
  partitionNote(partition: number): { text: string; refused: boolean } {
    if (!this._view || this._blocked()) {
      return { text: '', refused: false };
    }
    if (!this.isThetaPartition(partition)) {
      return { text: 'no steps: not θ’s', refused: false };
    }
    if (this._view.options.refused[String(partition)]) {
      return { text: 'step out first', refused: true };
    }
    if (this.ended(partition)) {
      return { text: 'all processed', refused: false };
    }
    return { text: '', refused: false };
  }

  /** Forget the error shown. */
  clearError(): void {
    if (this._error) {
      this._error = null;
      this._changed.emit();
    }
  }

  dispose(): void {
    if (this._isDisposed) {
      return;
    }
    this._isDisposed = true;
    this._source.event.disconnect(this._onEvent, this);
    Signal.clearData(this);
  }

  private _notTheta(partition: number): IStepState | null {
    if (this.isThetaPartition(partition)) {
      return null;
    }
    return {
      enabled: false,
      reason: `θ (${this._view!.chain[0]}) has no partition ${partition}: it is fed after a shuffle or a union; steps go by θ's partitions`
    };
  }

  private _blocked(): IStepState | null {
    if (!this.available) {
      return { enabled: false, reason: 'The run is still running: steps replay an ended run' };
    }
    if (!this._view) {
      return { enabled: false, reason: 'Jump to an interaction first: click one on the timeline' };
    }
    if (this._busy) {
      return { enabled: false, reason: `Waiting for the kernel: ${this._busy}` };
    }
    return null;
  }

  private async _act(
    action: string,
    partition: number | null,
    call: (run: string) => Promise<IDebugView>
  ): Promise<void> {
    const run = this._runId;
    if (run === null || this._busy) {
      return;
    }
    this._busy = action;
    this._error = null;
    this._changed.emit();
    this._token++; // a `debug.view` on its way is older than this
    try {
      const view = await call(run);
      if (run === this._runId) {
        if (partition !== null) {
          this._lastPartition = partition;
        } else if (typeof view.partition === 'number') {
          this._lastPartition = view.partition; // a jump to the failure: its partition
        }
        this._busy = null;
        this._cancelling = false;
        this._setView(view, true);
      }
    } catch (reason) {
      if (run === this._runId) {
        // A cancelled jump or step fails like any other: the view stays as it was.
        this._busy = null;
        this._cancelling = false;
        this._setError(reason, action, partition);
      }
    }
  }

  private _setView(view: IDebugView, force = false): void {
    const key = viewKey(view);
    const same = key === this._viewKey;
    this._view = view;
    this._viewKey = key;
    if (typeof view.partition === 'number' && !force) {
      this._lastPartition = view.partition;
    }
    if (!same || force) {
      this._error = null;
    }
    this._changed.emit();
  }

  private _setError(reason: unknown, action: string, partition: number | null): void {
    const type = reason instanceof RequestError ? reason.type : 'internal';
    this._error = { type, message: message(reason), action, partition };
    this._changed.emit();
  }

  private async _loadActions(): Promise<void> {
    const run = this._runId;
    if (run === null) {
      return;
    }
    try {
      const result = await this._source.request('run.actions', { run }, LONG_REQUEST_TIMEOUT);
      if (run === this._runId) {
        // Actions pushed while the log was on its way come after it.
        const known = new Set(result.actions.map(a => `${a.time}|${a.call}`));
        this._actions = [...result.actions, ...this._actions.filter(a => !known.has(`${a.time}|${a.call}`))];
        this._changed.emit();
      }
    } catch {
      // An older kernel: no action log to show.
    }
  }

  /** The preparation of time travel, once the run has ended (an older kernel has none). */
  private async _loadProgress(): Promise<void> {
    const run = this._runId;
    if (run === null) {
      return;
    }
    const token = ++this._progressToken;
    try {
      const result = await this._source.request('debug.progress', { run }, LONG_REQUEST_TIMEOUT);
      // A `debug.preparing` event that came while the reply was on its way is newer.
      if (token === this._progressToken && run === this._runId) {
        this._setProgress(result?.progress ?? null);
      }
    } catch {
      // An older kernel: nothing is prepared in the background.
    }
  }

  private _setProgress(progress: IReplayProgress | null): void {
    const old = this._progress;
    if (
      old === progress ||
      (old &&
        progress &&
        old.state === progress.state &&
        old.done === progress.done &&
        old.of === progress.of &&
        old.error === progress.error)
    ) {
      return;
    }
    this._progress = progress;
    this._changed.emit();
  }

  private _onEvent(source: unknown, msg: IEventMessage): void {
    if (msg.event === 'debug.moved' && msg.data.run === this._runId) {
      this._setView(msg.data.view);
    } else if (msg.event === 'debug.preparing' && msg.data.run === this._runId) {
      this._progressToken++;
      this._setProgress(msg.data.progress);
    } else if (msg.event === 'run.action' && msg.data.run === this._runId) {
      this._actions = [...this._actions, msg.data.action];
      this._changed.emit();
    }
  }

  private _source: IRunsSource;
  private _runId: string | null = null;
  private _status: RunStatus | null = null;
  private _view: IDebugView | null = null;
  private _viewKey = '';
  private _busy: string | null = null;
  private _cancelling = false;
  private _progress: IReplayProgress | null = null;
  private _progressToken = 0;
  private _error: IDebugError | null = null;
  private _lastPartition: number | null = null;
  private _actions: IAction[] = [];
  private _token = 0;
  private _isDisposed = false;
  private _changed = new Signal<this, void>(this);
}

/**
 * The line that says how the preparation of time travel goes: "Preparing time travel:
 * 40%" (or "starting…" before the number of interactions is known), why it failed, or
 * null when there is nothing to say (ready, or unknown).
 */
export function preparingText(progress: IReplayProgress | null): string | null {
  if (!progress) {
    return null;
  }
  switch (progress.state) {
    case 'starting':
    case 'preparing': {
      if (!(progress.of > 0)) {
        return 'Preparing time travel: starting…';
      }
      const percent = Math.min(100, Math.max(0, Math.floor((100 * progress.done) / progress.of)));
      return `Preparing time travel: ${percent}%`;
    }
    case 'failed':
      return `Time travel could not be prepared: ${progress.error || 'no reason given'}`;
    default:
      return null;
  }
}

/** A cheap identity of a view: the same view reported twice (reply and event) is one. */
export function viewKey(view: IDebugView): string {
  const counts = view.workers.map(w => `${w.operator}@${w.partition}=${w.count}`).join(',');
  const pending = Object.entries(view.pending)
    .map(
      ([p, ops]) =>
        `${p}:` +
        Object.values(ops)
          .map(o => o.count)
          .join('/')
    )
    .join(',');
  const failure = view.failure ? `${view.failure.operator}@${view.failure.partition}` : '';
  return `${view.index}|${view.step}|${counts}|${pending}|${view.outputs.length}|${failure}`;
}

/** The status line: "2 partitions · Over on 1, Into on 1, Out on none". */
export function stepCountsText(counts: { partitions: number; over: number; into: number; out: number }): string {
  const on = (n: number) => (n === 0 ? 'none' : n === counts.partitions && n > 1 ? 'all' : String(n));
  return `${plural(counts.partitions, 'partition')} · Over on ${on(counts.over)}, Into on ${on(counts.into)}, Out on ${on(counts.out)}`;
}
