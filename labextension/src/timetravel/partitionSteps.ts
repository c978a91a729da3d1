import { Widget } from '@lumino/widgets';

import { IStepState, preparingText } from './debugModel';
import { el, setText } from '../widgets/format';
import type { ISnapshotPartition } from './snapshotModel';
import { pyRepr } from '../comm/tagged';
import type { TimeTravelModel } from './timeTravel';
import { VirtualList } from '../widgets/virtualList';

const ROW_HEIGHT = 48;

/**
 * The partitions of G(θ) in the snapshot shown, as a windowed list (200 partitions
 * stay cheap): per partition the workers' counts, the record waiting at θ, and the
 * step buttons; a step that is impossible is disabled with the reason as its tooltip,
 * a refused step is shown inline. A click on a partition shows its states. While a
 * jump or step is on its way, a Cancel button stops it; while time travel is being
 * prepared after the run, a line says how far it is.
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
    this._outputs = el('div', 'jp-icedtea-step-outputs');
    this._action = el('div', 'jp-icedtea-last-action jp-icedtea-muted');
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
      el('h3', 'jp-icedtea-section-title', 'Partitions and steps'),
      head,
      this._preparing,
      this._error,
      this._list.node,
      this._outputs,
      this._action
    );
    this._list.node.addEventListener('click', this._onClick);
    model.snapshot.changed.connect(this._render, this);
    model.debug.changed.connect(this._render, this);
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
    this._model.snapshot.changed.disconnect(this._render, this);
    this._model.debug.changed.disconnect(this._render, this);
    this._list.dispose();
    super.dispose();
  }

  protected onAfterShow(): void {
    this._list.render();
  }

  private _render(): void {
    const { snapshot, debug } = this._model;
    const preparing = preparingText(debug.progress);
    // shown while time travel is prepared too: the user sees it before picking an interaction
    this.setHidden(snapshot.mode === 'empty' && !debug.error && !preparing);
    const view = debug.view;
    const partitions = snapshot.partitions;
    let status: string;
    if (debug.busy) {
      status = debug.cancelling ? `Cancelling: ${debug.busy}…` : `Working: ${debug.busy}…`;
    } else if (snapshot.mode === 'debug' && view) {
      const over = view.options.step_over;
      const into = view.options.step_into;
      status = `${partitions.length} partition${partitions.length === 1 ? '' : 's'} · ${over} step-over${over === 1 ? '' : 's'} and ${into} step-into${into === 1 ? '' : 's'} possible`;
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
  }

  private _update(row: HTMLElement, item: ISnapshotPartition): void {
    const { snapshot, debug } = this._model;
    const p = item.partition;
    const debugging = snapshot.mode === 'debug';
    row.dataset.partition = String(p);
    const selected = p === snapshot.selectedPartition;
    row.classList.toggle('jp-mod-selected', selected);
    row.setAttribute('aria-selected', String(selected));
    const [name, counts, next, over, into, out] = parts(row);
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
          ? `next at ${theta}: ${first}` + (waiting!.count > 1 ? ` (+${waiting!.count - 1})` : '')
          : `nothing waits at ${theta}`) + (downstream ? ` · ${downstream} waiting downstream` : '')
      );
      next.title = next.textContent ?? '';
    } else {
      setText(next, '');
    }
    row.dataset.refused = String(!!debug.view?.options.refused[String(p)]);
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
  private _error: HTMLElement;
  private _outputs: HTMLElement;
  private _action: HTMLElement;
  private _list: VirtualList<ISnapshotPartition>;
}

function createRow(): HTMLElement {
  const row = el('div', 'jp-icedtea-partition-steps');
  row.setAttribute('role', 'option');
  const top = el('div', 'jp-icedtea-steps-line');
  top.append(el('span', 'jp-icedtea-steps-partition'), el('span', 'jp-icedtea-steps-counts jp-icedtea-muted'));
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
  bottom.append(el('span', 'jp-icedtea-steps-next'), buttons);
  row.append(top, bottom);
  return row;
}

function parts(row: HTMLElement): HTMLElement[] {
  const [top, bottom] = Array.from(row.children) as HTMLElement[];
  const [name, counts] = Array.from(top.children) as HTMLElement[];
  const [next, buttons] = Array.from(bottom.children) as HTMLElement[];
  return [name, counts, next, ...(Array.from(buttons.children) as HTMLElement[])];
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
