import type { IDisposable } from '@lumino/disposable';
import { ISignal, Signal } from '@lumino/signaling';

import type { IControlView, IEventMessage, IHitItem, Tagged } from '../comm/protocol';
import type { IRunsSource, RunsModel } from '../runs/model';
import { pauseText } from './texts';

/** A decision at a hit (`hit.skip()`, `hit.replace(record)`, `hit.resume()`, `hit.stop()`). */
export type HitAction = 'skip' | 'replace' | 'resume' | 'stop';

/**
 * Live control of the selected run (Amber): paused or not, its breakpoints and their
 * hits, kept up to date from `run.control` events. Every action is one request, which
 * the kernel records as its API call (source `sidebar`). No DOM: views listen to
 * `changed`; `hitArrived` tells the sidebar to open a new hit.
 */
export class ControlModel implements IDisposable {
  constructor(runs: RunsModel, source: IRunsSource) {
    this._runs = runs;
    this._source = source;
    runs.changed.connect(this._onRuns, this);
    source.event.connect(this._onEvent, this);
    this._onRuns();
  }

  get changed(): ISignal<this, void> {
    return this._changed;
  }

  /** A hit the user has not decided yet arrived (the sidebar opens it). */
  get hitArrived(): ISignal<this, IHitItem> {
    return this._hitArrived;
  }

  get runId(): string | null {
    return this._runId;
  }

  /** The selected run's live control, once fetched. */
  get view(): IControlView | null {
    return this._view;
  }

  /** The hit waiting for a decision (the oldest), or null. */
  get pendingHit(): IHitItem | null {
    return this._view?.hits.find(h => h.decision === null) ?? null;
  }

  /** What the last action said (a pause's time, an error), for the views. */
  get message(): string {
    return this._message;
  }

  get isDisposed(): boolean {
    return this._isDisposed;
  }

  dispose(): void {
    if (this._isDisposed) {
      return;
    }
    this._isDisposed = true;
    this._runs.changed.disconnect(this._onRuns, this);
    this._source.event.disconnect(this._onEvent, this);
    Signal.clearData(this);
  }

  async pause(): Promise<void> {
    await this._act(async run => {
      return pauseText(await this._source.request('control.pause', { run, source: 'sidebar' }));
    });
  }

  async resume(): Promise<void> {
    await this._act(async run => {
      const result = await this._source.request('control.resume', { run, source: 'sidebar' });
      return `Resumed in ${(result.seconds * 1000).toFixed(0)} ms`;
    });
  }

  async addBreakpoint(operator: string, when: string): Promise<void> {
    await this._act(async run => {
      this._setView(await this._source.request('control.add_breakpoint', { run, source: 'sidebar', operator, when }));
      return `Breakpoint on ${operator}: ${when}`;
    });
  }

  async removeBreakpoint(id: number): Promise<void> {
    await this._act(async run => {
      this._setView(
        await this._source.request('control.remove_breakpoint', { run, source: 'sidebar', breakpoint: id })
      );
      return `Breakpoint ${id} removed`;
    });
  }

  /** Decide on hit `hit`; `record` (tagged JSON) is the replacement for `replace`. */
  async decide(hit: number, action: HitAction, record?: Tagged): Promise<void> {
    await this._act(async run => {
      const params = { run, source: 'sidebar' as const, hit, action, ...(action === 'replace' ? { record } : {}) };
      this._setView(await this._source.request('control.decide', params));
      return `Hit ${hit}: ${action}`;
    });
  }

  /** A running worker's state (best read while paused). */
  async liveState(operator: string, partition: number): Promise<{ [variable: string]: Tagged } | null> {
    const run = this._runId;
    if (run === null) {
      return null;
    }
    try {
      const result = await this._source.request('control.live_state', { run, operator, partition });
      return result.state;
    } catch (error) {
      this._say(`No state: ${errorText(error)}`);
      return null;
    }
  }

  async refresh(): Promise<void> {
    const run = this._runId;
    if (run === null || this._source.state !== 'ready') {
      return;
    }
    try {
      const view = await this._source.request('control.get', { run });
      if (view.run === this._runId) {
        this._setView(view);
      }
    } catch (error) {
      this._say(errorText(error));
    }
  }

  private async _act(action: (run: string) => Promise<string>): Promise<void> {
    const run = this._runId;
    if (run === null) {
      return;
    }
    try {
      this._say(await action(run));
    } catch (error) {
      this._say(errorText(error));
    }
  }

  private _say(message: string): void {
    this._message = message;
    this._changed.emit();
  }

  private _setView(view: IControlView): void {
    const before = new Set((this._view?.hits ?? []).map(h => h.index));
    this._view = view;
    this._changed.emit();
    for (const hit of view.hits) {
      if (hit.decision === null && !before.has(hit.index)) {
        this._hitArrived.emit(hit);
      }
    }
  }

  private _onRuns(): void {
    const id = this._runs.state === 'ready' ? this._runs.selectedId : null;
    if (id !== this._runId) {
      this._runId = id;
      this._view = null;
      this._message = '';
      this._changed.emit();
      void this.refresh();
    }
  }

  private _onEvent(_: unknown, message: IEventMessage): void {
    if (message.event === 'run.control' && message.data.run === this._runId) {
      this._setView(message.data.view);
    } else if (message.event === 'run.status' && message.data.run === this._runId) {
      void this.refresh();
    }
  }

  private _runs: RunsModel;
  private _source: IRunsSource;
  private _runId: string | null = null;
  private _view: IControlView | null = null;
  private _message = '';
  private _isDisposed = false;
  private _changed = new Signal<this, void>(this);
  private _hitArrived = new Signal<this, IHitItem>(this);
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
