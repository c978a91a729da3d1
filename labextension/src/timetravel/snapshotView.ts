import { Widget } from '@lumino/widgets';

import { el, formatCount, plural, setChildren, setText } from '../widgets/format';
import { RedrawWhenShown } from '../widgets/redrawWhenShown';
import type { IPendingAt } from '../comm/protocol';
import { IWorkerState, moreWaiting } from './snapshotModel';
import { renderStateTree, TreeState } from './stateTree';
import { pyRepr } from '../comm/tagged';
import type { TimeTravelModel } from './timeTravel';

/**
 * The snapshot shown (the debugger's view after a jump, else the recorded snapshot of
 * the selected interaction) for the selected partition: per operator of G(θ) its
 * count, the records waiting at it with a `Step into` button (debugger), and its
 * state as a tree with what changed since the previous snapshot highlighted. A jump
 * made while time travel was still being prepared says so under the title.
 */
export class SnapshotView extends Widget {
  constructor(model: TimeTravelModel) {
    super();
    this._model = model;
    this.addClass('jp-icedtea-SnapshotView');
    this._title = el('div', 'jp-icedtea-snapshot-title');
    this._preparing = el('div', 'jp-icedtea-snapshot-preparing jp-icedtea-muted');
    this._notes = el('ul', 'jp-icedtea-snapshot-notes');
    this._message = el('div', 'jp-icedtea-muted jp-icedtea-snapshot-message');
    this._comparison = el('div', 'jp-icedtea-snapshot-comparison jp-icedtea-muted');
    this._error = el('div', 'jp-icedtea-inline-error');
    this._error.setAttribute('role', 'alert');
    this._workers = el('div', 'jp-icedtea-workers');
    this.node.append(
      this._title,
      this._preparing,
      this._notes,
      this._message,
      this._comparison,
      this._error,
      this._workers
    );
    this._workers.addEventListener('click', this._onClick);
    model.snapshot.changed.connect(this._onChanged, this);
    model.debug.changed.connect(this._onChanged, this);
    this._render();
  }

  dispose(): void {
    if (this.isDisposed) {
      return;
    }
    this._model.snapshot.changed.disconnect(this._onChanged, this);
    this._model.debug.changed.disconnect(this._onChanged, this);
    super.dispose();
  }

  protected onAfterShow(): void {
    this._redraw.shown();
  }

  /** Redraw, or (its section collapsed) on the next expand. */
  private _onChanged(): void {
    this._redraw.request();
  }

  private readonly _redraw = new RedrawWhenShown(this, () => this._render());

  private _render(): void {
    const { snapshot, debug } = this._model;
    const runId = this._model.timeline.runId;
    if (runId !== this._runId) {
      this._runId = runId;
      this._tree = new TreeState();
      this._sections.clear();
    }
    const debugging = snapshot.mode === 'debug';
    this.node.dataset.mode = snapshot.mode;
    setText(this._title, snapshot.title);
    this._title.title = debugging
      ? "The debugger's current view (after a jump or steps)"
      : 'The states recorded at the selected interaction';
    const view = debugging ? debug.view : null;
    const preparing = view?.preparing ?? '';
    setText(this._preparing, preparing);
    this._preparing.hidden = !preparing;
    const from = view?.started_from;
    this._preparing.title =
      preparing && typeof from === 'number' ? `The jump started from the fork parked at I${from}` : '';
    const notes = debugging ? (debug.view?.notes ?? []) : [];
    if (this._notes.dataset.key !== JSON.stringify(notes)) {
      this._notes.dataset.key = JSON.stringify(notes);
      this._notes.replaceChildren(...notes.map(n => el('li', undefined, n)));
    }
    this._notes.hidden = !notes.length;
    setText(this._error, snapshot.error ?? '');
    this._error.hidden = !snapshot.error;
    const partition = snapshot.selectedPartition;
    const message = snapshot.loading
      ? 'Loading the snapshot…'
      : partition === null
        ? snapshot.mode === 'empty'
          ? 'No snapshot shown yet: click an interaction (Interactions) to see the states recorded then, or, once the run has ended, to jump there.'
          : 'This snapshot holds no worker of G(θ).'
        : `Partition ${partition}` + (snapshot.partitions.length > 1 ? ' · others in Partitions and steps' : '');
    setText(this._message, message);
    this._message.hidden = !message;
    const comparison = snapshot.loading ? null : snapshot.comparison;
    setText(this._comparison, comparison?.text ?? '');
    this._comparison.hidden = !comparison;
    this._comparison.dataset.kind = comparison?.kind ?? '';
    const sections = snapshot.states.map(state => this._section(state, debugging));
    setChildren(this._workers, sections);
  }

  /** One worker's section, rebuilt only when what it shows changed. */
  private _section(cell: IWorkerState, debugging: boolean): HTMLElement {
    const key = `${cell.operator}/${cell.partition}`;
    const debug = this._model.debug;
    const pending = debugging ? debug.pending(cell.partition, cell.operator) : null;
    const into = debugging ? debug.stepIntoState(cell.partition, cell.operator) : null;
    const signature = [
      cell.state,
      cell.changed,
      cell.loading,
      cell.error,
      cell.count,
      cell.status,
      cell.previous,
      pending,
      into?.enabled,
      into?.reason,
      this._version
    ];
    let section = this._sections.get(key);
    if (
      section &&
      section.signature.length === signature.length &&
      section.signature.every((v, i) => v === signature[i])
    ) {
      return section.node;
    }
    const node = el('div', 'jp-icedtea-worker');
    node.dataset.operator = cell.operator;
    node.dataset.partition = String(cell.partition);
    node.dataset.loading = String(cell.loading);
    const theta = debugging ? debug.view?.chain[0] === cell.operator : this._isTheta(cell.operator);
    const head = el('div', 'jp-icedtea-worker-head');
    head.append(el('span', 'jp-icedtea-worker-name', cell.operator));
    if (theta) {
      head.append(el('span', 'jp-icedtea-theta-mark', 'θ'));
    }
    const facts = [
      cell.status && cell.status !== 'replayed' ? cell.status : '',
      cell.count !== null ? `${formatCount(cell.count)} processed` : ''
    ]
      .filter(Boolean)
      .join(' · ');
    head.append(el('span', 'jp-icedtea-muted', facts));
    if (cell.loading && cell.state && !cell.error) {
      // the state before, kept in view while the kernel answers: said so, and dimmed
      node.setAttribute('aria-busy', 'true');
      const updating = el('span', 'jp-icedtea-worker-updating', 'updating…');
      updating.title = 'The state shown is the one before; the new one is on its way from the kernel.';
      head.append(updating);
    }
    if (into) {
      const button = el('button', 'jp-icedtea-button jp-icedtea-step-button', 'Step into');
      button.type = 'button';
      button.dataset.action = 'step-into';
      button.dataset.operator = cell.operator;
      button.dataset.partition = String(cell.partition);
      button.disabled = !into.enabled;
      button.title = into.reason;
      button.setAttribute('aria-label', `Step into ${cell.operator} on partition ${cell.partition}: ${into.reason}`);
      head.append(button);
    }
    node.append(head);
    if (pending) {
      node.append(pendingList(pending));
    }
    if (cell.error) {
      node.append(el('div', 'jp-icedtea-inline-error', `Cannot load the state: ${cell.error}`));
    } else if (cell.state) {
      const index = this._model.snapshot.index;
      node.append(
        renderStateTree(cell.state, {
          prefix: key,
          tree: this._tree,
          changed: cell.changed,
          previous: cell.previous,
          pager:
            this._model.snapshot.mode === 'recorded' && index !== null
              ? (variable, start, size) => this._model.snapshot.page(cell.operator, variable, start, size)
              : null,
          onChange: () => {
            this._version++;
            this._render();
          }
        })
      );
    } else if (cell.loading) {
      node.append(el('div', 'jp-icedtea-muted', 'Loading the state…'));
    } else {
      node.append(
        el(
          'div',
          'jp-icedtea-muted',
          cell.status === 'not started' ? 'Not started at this interaction.' : 'No state recorded.'
        )
      );
    }
    section = { node, signature };
    this._sections.set(key, section);
    return node;
  }

  private _isTheta(operator: string): boolean {
    return !!this._model.runs.selected?.dag.operators.find(op => op.name === operator)?.theta;
  }

  private _onClick = (event: MouseEvent): void => {
    const button = (event.target as HTMLElement).closest<HTMLButtonElement>('button[data-action="step-into"]');
    if (button && !button.disabled) {
      void this._model.debug.stepInto(Number(button.dataset.partition), button.dataset.operator!);
    }
  };

  private _model: TimeTravelModel;
  private _runId: string | null = null;
  private _tree = new TreeState();
  private _version = 0;
  private _sections = new Map<string, { node: HTMLElement; signature: unknown[] }>();
  private _title: HTMLElement;
  private _preparing: HTMLElement;
  private _notes: HTMLUListElement;
  private _message: HTMLElement;
  private _comparison: HTMLElement;
  private _error: HTMLElement;
  private _workers: HTMLElement;
}

/** The records waiting at a worker (the first 20 the kernel sends), with their scopes. */
function pendingList(pending: IPendingAt): HTMLElement {
  const box = el('div', 'jp-icedtea-pending');
  box.dataset.count = String(pending.count);
  const title = pending.count === 0 ? 'nothing waiting' : `${plural(pending.count, 'record')} waiting`;
  box.append(el('div', 'jp-icedtea-pending-title', title));
  if (pending.records.length) {
    const list = el('ol', 'jp-icedtea-pending-records');
    pending.records.forEach((record, i) => {
      const item = el('li', 'jp-icedtea-pending-record');
      const scope = pending.scopes[i];
      if (scope !== undefined) {
        const tag = el('span', 'jp-icedtea-scope', `#${scope}`);
        tag.title = `Scope of θ's input #${scope}`;
        item.append(tag);
      }
      const rows = pending.rows?.[i];
      if (rows) {
        const range = el('span', 'jp-icedtea-rows', `rows ${rows[0]}–${rows[1] - 1}`);
        range.title = `A batch of ${plural(rows[1] - rows[0], 'row')}: rows ${rows[0]} to ${rows[1] - 1} of the partition`;
        item.append(range);
      }
      item.append(el('code', undefined, pyRepr(record, 200)));
      list.append(item);
    });
    box.append(list);
    const more = moreWaiting(pending.count, pending.records.length);
    if (more) {
      box.append(el('div', 'jp-icedtea-muted jp-icedtea-pending-more', more));
    }
  }
  return box;
}
