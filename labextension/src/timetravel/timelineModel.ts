import type { IDisposable } from '@lumino/disposable';
import { ISignal, Signal } from '@lumino/signaling';

import { IRunsSource, LONG_REQUEST_TIMEOUT } from '../runs/model';
import type { IEventMessage, IInteraction, RunStatus } from '../comm/protocol';
import { IClock, LIVE_INTERVAL, realClock, Throttle } from '../comm/throttle';

/** What the timeline needs to jump: the debugger model's `jump`. */
export interface IJumper {
  jump(index: number): Promise<unknown>;
}

/**
 * The interactions of the selected run, in index order, kept up to date from
 * `run.interaction` events (redraws at most every 250 ms), the selected one, and the
 * actions: select (a click: the debugger jumps there once the run has ended) and
 * interact now (while it runs).
 */
export class TimelineModel implements IDisposable {
  constructor(source: IRunsSource, jumper: IJumper | null = null, options: TimelineModel.IOptions = {}) {
    this._source = source;
    this._jumper = jumper;
    this._throttle = new Throttle(
      () => this._changed.emit(),
      options.interval ?? LIVE_INTERVAL,
      options.clock ?? realClock
    );
    source.event.connect(this._onEvent, this);
  }

  /** Emitted after a change: at once for the user's actions, at most every 250 ms for live events. */
  get changed(): ISignal<this, void> {
    return this._changed;
  }

  get runId(): string | null {
    return this._runId;
  }

  /** Whether the run records (interactions can be taken now). */
  get running(): boolean {
    return this._status === 'running';
  }

  /** Every interaction, I0 first. */
  get interactions(): readonly IInteraction[] {
    return this._interactions;
  }

  /** The interaction whose snapshot is shown (the newest until the user picks one). */
  get selectedIndex(): number | null {
    if (this._selected !== null) {
      return this._selected;
    }
    const last = this._interactions[this._interactions.length - 1];
    return last ? last.index : null;
  }

  /** Whether the selection follows the newest interaction (the user has not picked one). */
  get following(): boolean {
    return this._selected === null;
  }

  get loading(): boolean {
    return this._loading;
  }

  /** Whether an `Interact now` request waits for its reply. */
  get interacting(): boolean {
    return this._interacting;
  }

  /** The last failed request of the timeline, for the view. */
  get error(): string | null {
    return this._error;
  }

  get isDisposed(): boolean {
    return this._isDisposed;
  }

  interaction(index: number): IInteraction | undefined {
    const i = this._find(index);
    return i >= 0 ? this._interactions[i] : undefined;
  }

  /** Follow another run (or none), with its status. */
  setRun(id: string | null, status: RunStatus | null): void {
    const ended = this._status === 'running' && status !== null && status !== 'running';
    if (id === this._runId) {
      this._status = status;
      if (ended) {
        void this.refresh(); // the final list, every snapshot complete
      }
      this._emitNow();
      return;
    }
    this._runId = id;
    this._status = status;
    this._interactions = [];
    this._selected = null;
    this._error = null;
    this._interacting = false;
    this._token++;
    this._emitNow();
    if (id !== null) {
      void this.refresh();
    }
  }

  /** Fetch the run's interactions. */
  async refresh(): Promise<void> {
    const run = this._runId;
    if (run === null) {
      return;
    }
    const token = ++this._token;
    this._loading = true;
    try {
      const result = await this._source.request('run.interactions', { run }, LONG_REQUEST_TIMEOUT);
      if (token !== this._token || this._isDisposed) {
        return;
      }
      // Events that arrived while the list was on its way are newer than it.
      const live = this._interactions;
      this._interactions = [];
      for (const interaction of [...result.interactions, ...live]) {
        this._merge(interaction);
      }
      this._error = null;
    } catch (reason) {
      if (token === this._token) {
        this._error = `Cannot load the interactions: ${message(reason)}`;
      }
    } finally {
      if (token === this._token) {
        this._loading = false;
        this._emitNow();
      }
    }
  }

  /**
   * A click on an interaction: select it; once the run has ended the debugger jumps
   * there (`debug.jump`). Resolves when the jump is done.
   */
  async activate(index: number): Promise<void> {
    if (!this.interaction(index)) {
      return;
    }
    this._selected = index;
    this._emitNow();
    if (!this.running && this._runId !== null && this._jumper) {
      await this._jumper.jump(index);
    }
  }

  /** Show the newest interaction again, following new ones. */
  follow(): void {
    this._selected = null;
    this._emitNow();
  }

  /** `Interact now`: a manual interaction of the running run (`run.interact`). */
  async interact(): Promise<IInteraction | null> {
    const run = this._runId;
    if (run === null || !this.running || this._interacting) {
      return null;
    }
    this._interacting = true;
    this._error = null;
    this._emitNow();
    try {
      const result = await this._source.request('run.interact', { run, source: 'sidebar' }, LONG_REQUEST_TIMEOUT);
      if (run === this._runId) {
        this._merge(result.interaction);
      }
      return result.interaction;
    } catch (reason) {
      if (run === this._runId) {
        this._error = `Interact now failed: ${message(reason)}`;
      }
      return null;
    } finally {
      if (run === this._runId) {
        this._interacting = false;
        this._emitNow();
      }
    }
  }

  dispose(): void {
    if (this._isDisposed) {
      return;
    }
    this._isDisposed = true;
    this._throttle.dispose();
    this._source.event.disconnect(this._onEvent, this);
    Signal.clearData(this);
  }

  private _onEvent(source: unknown, message: IEventMessage): void {
    if (message.event === 'run.interaction' && message.data.run === this._runId) {
      this._merge(message.data.interaction);
      this._throttle.schedule();
    }
  }

  /** Insert in index order, or replace the one with the same index (it completed). */
  private _merge(interaction: IInteraction): void {
    const list = this._interactions;
    const last = list[list.length - 1];
    if (!last || last.index < interaction.index) {
      list.push(interaction); // the usual case: the newest
      return;
    }
    const i = this._find(interaction.index);
    if (i >= 0) {
      list[i] = interaction;
      return;
    }
    let lo = 0;
    let hi = list.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (list[mid].index < interaction.index) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    list.splice(lo, 0, interaction);
  }

  /** Position of interaction `index` (binary search), or -1. */
  private _find(index: number): number {
    const list = this._interactions;
    let lo = 0;
    let hi = list.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const at = list[mid].index;
      if (at === index) {
        return mid;
      }
      if (at < index) {
        lo = mid + 1;
      } else {
        hi = mid - 1;
      }
    }
    return -1;
  }

  private _emitNow(): void {
    this._throttle.fire();
  }

  private _source: IRunsSource;
  private _jumper: IJumper | null;
  private _throttle: Throttle;
  private _runId: string | null = null;
  private _status: RunStatus | null = null;
  private _interactions: IInteraction[] = [];
  private _selected: number | null = null;
  private _loading = false;
  private _interacting = false;
  private _error: string | null = null;
  private _token = 0;
  private _isDisposed = false;
  private _changed = new Signal<this, void>(this);
}

export namespace TimelineModel {
  export interface IOptions {
    /** Minimum ms between two live redraws (default 250). */
    interval?: number;
    clock?: IClock;
  }
}

export function message(reason: unknown): string {
  return reason instanceof Error ? reason.message : String(reason);
}
