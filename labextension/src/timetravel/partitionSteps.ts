import { Widget } from '@lumino/widgets';

import { IStepState, preparingText, stepCountsText } from './debugModel';
import { el, setText } from '../widgets/format';
import { RedrawWhenShown } from '../widgets/redrawWhenShown';
import type { ISnapshotPartition } from './snapshotModel';
import { pyRepr } from '../comm/tagged';
import type { IReplayedFailure } from '../comm/protocol';
import type { TimeTravelModel } from './timeTravel';
import { VirtualList } from '../widgets/virtualList';

const ROW_HEIGHT = 64;

/**
 * The partitions of G(θ) in the snapshot shown, as a windowed list (200 partitions
 * stay cheap): per partition the workers' counts, the record waiting at θ, the step
 * buttons, and a line saying why step over is not possible there (⚠: refused, scopes
 * would interleave). Under the list, what each button of the selected partition does
 * or why it is disabled, in words; the status line counts the enabled buttons. A click
 * on a partition shows its states. While a jump or step is on its way, a Cancel button
 * stops it; while time travel is being prepared after the run, a line says how far.
 */
export class PartitionSteps extends Widget {
  constructor(model: TimeTravelModel) {
    super();
    this._model = model;
    this.addClass('jp-icedtea-PartitionSteps');
    this._status = el('div', 'jp-icedtea-step-status');
    this._status.setAttribute('aria-live', 'polite');
    this._cancel = el('button', 'jp-icedtea-button jp-icedtea-cancel-button', 'Cancel');
    this._cancel.type = 'button';
    this._cancel.title = 'Stop this jump or step';
    this._cancel.hidden = true;
    this._cancel.addEventListener('click', this._onCancel);
    const head = el('div', 'jp-icedtea-step-head');
    head.append(this._status, this._cancel);
    this._preparing = el('div', 'jp-icedtea-preparing jp-icedtea-muted');
    this._error = el('div', 'jp-icedtea-inline-error jp-icedtea-step-error');
    this._error.setAttribute('role', 'alert');
    this._failure = el('div', 'jp-icedtea-replayed-failure');
    this._failure.setAttribute('role', 'alert');
    this._outputs = el('div', 'jp-icedtea-step-outputs');
    this._action = el('div', 'jp-icedtea-last-action jp-icedtea-muted');
    this._why = el('div', 'jp-icedtea-step-why');
    this._why.setAttribute('aria-live', 'polite');
    this._list = new VirtualList<ISnapshotPartition>({
      rowHeight: ROW_HEIGHT,
      maxHeight: 240,
      className: 'jp-icedtea-partitions',
      role: 'listbox',
      label: 'Partitions of G(θ)',
      create: createRow,
      update: (row, item) => this._update(row, item)
    });
    this.node.append(
      head,
      this._preparing,
      this._error,
      this._failure,
      this._list.node,
      this._why,
      this._outputs,
      this._action
    );
    this._list.node.addEventListener('click', this._onClick);
    model.snapshot.changed.connect(this._onChanged, this);
    model.debug.changed.connect(this._onChanged, this);
    this._render();
  }

  /** The virtual list (the benchmark scrolls it). */
  get list(): VirtualList<ISnapshotPartition> {
    return this._list;
  }

  dispose(): void {
    if (this.isDisposed) {
      return;
    }
    this._model.snapshot.changed.disconnect(this._onChanged, this);
    this._model.debug.changed.disconnect(this._onChanged, this);
    this._list.dispose();
    super.dispose();
  }

  protected onAfterShow(): void {
    if (this._redraw.stale) {
      this._redraw.shown();
    } else {
      this._list.render();
    }
  }

  /** Redraw, or (its section collapsed) on the next expand. */
  private _onChanged(): void {
    this._redraw.request();
  }

  private readonly _redraw = new RedrawWhenShown(this, () => this._render());

  private _render(): void {
    const { snapshot, debug } = this._model;
    const preparing = preparingText(debug.progress);
    const view = debug.view;
    const partitions = snapshot.partitions;
    let status: string;
    if (debug.busy) {
      status = debug.cancelling ? `Cancelling: ${debug.busy}…` : `Working: ${debug.busy}…`;
    } else if (snapshot.mode === 'debug' && view) {
      status = stepCountsText(debug.stepCounts());
    } else if (!debug.available) {
      status = 'The run is recording: steps replay an ended run. Interactions show their recorded snapshots.';
    } else {
      status = 'Click an interaction on the timeline to jump there, then step through the records.';
    }
    setText(this._status, status);
    this.node.dataset.busy = String(!!debug.busy);
    this._cancel.hidden = !debug.busy;
    this._cancel.disabled = debug.cancelling;
    const progress = debug.progress;
    this._preparing.hidden = !preparing;
    this._preparing.dataset.state = progress?.state ?? '';
    setText(this._preparing, preparing ?? '');
    const replaying = progress && (progress.state === 'starting' || progress.state === 'preparing') ? progress : null;
    this._preparing.title = replaying
      ? 'Replaying the run once to park fork checkpoints' +
        (replaying.of > 0 ? ` (${replaying.done} of ${replaying.of} interactions)` : '') +
        ': jumps work meanwhile, but may be slower'
      : '';
    const error = debug.error;
    this._error.hidden = !error;
    this._error.dataset.type = error?.type ?? '';
    setText(this._error, error ? `${capitalize(error.action)} ${errorVerb(error.type)}: ${error.message}` : '');
    this._renderFailure(snapshot.mode === 'debug' && view ? (view.failure ?? null) : null);
    const outputs = snapshot.mode === 'debug' && view && view.outputs.length ? view.outputs : null;
    this._outputs.hidden = !outputs;
    setText(
      this._outputs,
      outputs ? `Left the chain in the last step: ${outputs.map(o => pyRepr(o, 80)).join(', ')}` : ''
    );
    const last = debug.actions[debug.actions.length - 1];
    this._action.hidden = !last;
    setText(this._action, last ? `Last action (${last.source}): ${last.call}` : '');
    this._list.setItems(partitions);
    this._renderWhy();
  }

  /** The recorded run's exception, once a step reproduced it: that partition's end. */
  private _renderFailure(failure: IReplayedFailure | null): void {
    const key = failure ? JSON.stringify(failure) : '';
    this._failure.hidden = !failure;
    if (this._failure.dataset.key === key) {
      return;
    }
    this._failure.dataset.key = key;
    this._failure.replaceChildren();
    if (failure) {
      this._failure.append(
        el(
          'div',
          'jp-icedtea-replayed-failure-title',
          `Partition ${failure.partition} ended as in the recorded run: ${failure.operator} raised ` +
            `${failure.exception}: ${failure.message} on its input #${failure.index}`
        )
      );
      const details = el('details', 'jp-icedtea-error-traceback');
      details.append(el('summary', undefined, 'Traceback (replayed)'), el('pre', undefined, failure.traceback));
      this._failure.append(details);
    }
  }

  /** What each step button of the selected partition does, or why it is disabled. */
  private _renderWhy(): void {
    const { snapshot, debug } = this._model;
    const p = snapshot.selectedPartition;
    const show = snapshot.mode === 'debug' && debug.view !== null && p !== null && !debug.busy;
    this._why.hidden = !show;
    if (!show) {
      this._why.replaceChildren();
      this._why.dataset.key = '';
      return;
    }
    const states: [string, IStepState][] = [
      ['Over', debug.stepOverState(p)],
      ['Into', debug.stepIntoState(p)],
      ['Out', debug.stepOutState(p)]
    ];
    const key = JSON.stringify([p, states]);
    if (this._why.dataset.key === key) {
      return;
    }
    this._why.dataset.key = key;
    this._why.dataset.partition = String(p);
    const list = el('ul', 'jp-icedtea-step-why-list');
    for (const [label, state] of states) {
      const item = el('li', state.enabled ? 'jp-icedtea-step-why-ok' : 'jp-icedtea-step-why-no');
      item.dataset.action = `step-${label.toLowerCase()}`;
      item.append(el('b', undefined, `${label}: `), state.enabled ? state.reason : `not now. ${state.reason}`);
      list.append(item);
    }
    this._why.replaceChildren(el('div', 'jp-icedtea-step-why-title', `Partition ${p}`), list);
  }

  private _update(row: HTMLElement, item: ISnapshotPartition): void {
    const { snapshot, debug } = this._model;
    const p = item.partition;
    const debugging = snapshot.mode === 'debug';
    row.dataset.partition = String(p);
    const selected = p === snapshot.selectedPartition;
    row.classList.toggle('jp-mod-selected', selected);
    row.setAttribute('aria-selected', String(selected));
    const [name, counts, next, note, warn, noteText, over, into, out] = parts(row);
    setText(name, `p${p}`);
    setText(
      counts,
      item.workers
        .map(w => `${w.operator} ${w.count ?? '–'}` + (debugging || w.status === 'running' ? '' : ` (${w.status})`))
        .join(' · ')
    );
    counts.title = 'Records each operator has processed' + (debugging ? ' in the replay' : ' at this interaction');
    if (debugging) {
      const theta = debug.view!.chain[0];
      const waiting = theta ? debug.pending(p, theta) : null;
      const downstream = debug.view!.chain.slice(1).reduce((n, op) => n + (debug.pending(p, op)?.count ?? 0), 0);
      const first = waiting && waiting.records.length ? pyRepr(waiting.records[0], 120) : null;
      setText(
        next,
        (first
          ? `next at ${theta}: ${first}` + (waiting!.count > 1 ? ` (and ${waiting!.count - 1} more)` : '')
          : `nothing waits at ${theta}`) + (downstream ? ` · ${downstream} waiting downstream` : '')
      );
      next.title = next.textContent ?? '';
    } else {
      setText(next, '');
    }
    const partitionNote = debugging ? debug.partitionNote(p) : { text: '', refused: false };
    row.dataset.refused = String(partitionNote.refused);
    warn.hidden = !partitionNote.refused;
    setText(noteText, partitionNote.text);
    note.title = partitionNote.text ? `Step over: ${debug.stepOverState(p).reason}` : '';
    note.dataset.refused = String(partitionNote.refused);
    setButton(over, debug.stepOverState(p), p);
    const intoState = debug.stepIntoState(p);
    setButton(into, intoState, p);
    into.dataset.operator = intoState.operator ?? '';
    setButton(out, debug.stepOutState(p), p);
  }

  private _onClick = (event: MouseEvent): void => {
    const target = event.target as HTMLElement;
    const row = target.closest<HTMLElement>('.jp-icedtea-partition-steps');
    if (!row) {
      return;
    }
    const partition = Number(row.dataset.partition);
    const button = target.closest<HTMLButtonElement>('button[data-action]');
    const debug = this._model.debug;
    if (button) {
      if (button.disabled) {
        return;
      }
      switch (button.dataset.action) {
        case 'step-over':
          void debug.stepOver(partition);
          break;
        case 'step-into':
          if (button.dataset.operator) {
            void debug.stepInto(partition, button.dataset.operator);
          }
          break;
        case 'step-out':
          void debug.stepOut(partition);
          break;
      }
    }
    this._model.snapshot.selectPartition(partition);
  };

  private _onCancel = (): void => {
    void this._model.debug.cancel();
  };

  private _model: TimeTravelModel;
  private _status: HTMLElement;
  private _cancel: HTMLButtonElement;
  private _preparing: HTMLElement;
  private _failure: HTMLElement;
  private _error: HTMLElement;
  private _outputs: HTMLElement;
  private _action: HTMLElement;
  private _why: HTMLElement;
  private _list: VirtualList<ISnapshotPartition>;
}

function createRow(): HTMLElement {
  const row = el('div', 'jp-icedtea-partition-steps');
  row.setAttribute('role', 'option');
  const top = el('div', 'jp-icedtea-steps-line');
  top.append(el('span', 'jp-icedtea-steps-partition'), el('span', 'jp-icedtea-steps-counts jp-icedtea-muted'));
  const middle = el('div', 'jp-icedtea-steps-line');
  middle.append(el('span', 'jp-icedtea-steps-next'));
  const bottom = el('div', 'jp-icedtea-steps-line');
  const buttons = el('span', 'jp-icedtea-steps-buttons');
  for (const [action, label] of [
    ['step-over', 'Over'],
    ['step-into', 'Into'],
    ['step-out', 'Out']
  ]) {
    const button = el('button', 'jp-icedtea-button jp-icedtea-step-button', label);
    button.type = 'button';
    button.dataset.action = action;
    buttons.append(button);
  }
  // Beside the buttons, why Over is not possible: "⚠ step out first" (refused), "all processed".
  const note = el('span', 'jp-icedtea-steps-note');
  const warn = el('span', 'jp-icedtea-steps-warn', '⚠ ');
  warn.setAttribute('aria-label', 'Step over refused: records of the current scope still wait downstream.');
  warn.hidden = true;
  note.append(warn, el('span', 'jp-icedtea-steps-note-text'));
  bottom.append(buttons, note);
  row.append(top, middle, bottom);
  return row;
}

function parts(row: HTMLElement): HTMLElement[] {
  const [top, middle, bottom] = Array.from(row.children) as HTMLElement[];
  const [name, counts] = Array.from(top.children) as HTMLElement[];
  const [next] = Array.from(middle.children) as HTMLElement[];
  const [buttons, note] = Array.from(bottom.children) as HTMLElement[];
  const [warn, noteText] = Array.from(note.children) as HTMLElement[];
  return [name, counts, next, note, warn, noteText, ...(Array.from(buttons.children) as HTMLElement[])];
}

function setButton(button: HTMLElement, state: IStepState, partition: number): void {
  const b = button as HTMLButtonElement;
  b.disabled = !state.enabled;
  b.title = state.reason;
  b.dataset.partition = String(partition);
  b.setAttribute('aria-label', `${b.textContent} on partition ${partition}: ${state.reason}`);
}

/** "refused" for a step the kernel refused, "cancelled" for one stopped by Cancel, else "failed". */
function errorVerb(type: string): string {
  return type === 'refused' || type === 'cancelled' ? type : 'failed';
}

function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
