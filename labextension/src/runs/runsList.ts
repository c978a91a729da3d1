import {
  badge,
  el,
  formatDuration,
  formatTime,
  plural,
  runDuration,
  setBadge,
  setChildren,
  setText
} from '../widgets/format';
import type { RunsModel } from './model';

/** The elements of one run's entry, kept across updates so that clicks land. */
interface IItem {
  node: HTMLLIElement;
  badge: HTMLSpanElement;
  started: HTMLSpanElement;
  duration: HTMLSpanElement;
  operators: HTMLSpanElement;
  cell: HTMLDivElement;
}

/**
 * The runs of the kernel, newest first; a click selects one. Not a widget: `RunView`
 * shows it under the selected run's header when the user opens it ("3 runs ▾"), so
 * the selected run is described once.
 */
export class RunsList {
  constructor(private readonly _model: RunsModel) {
    this.node = el('ul', 'jp-icedtea-runs');
    this.node.setAttribute('role', 'listbox');
    this.node.setAttribute('aria-label', 'Runs of this kernel');
    this.node.addEventListener('click', this._onClick);
    this.node.addEventListener('keydown', this._onKey);
  }

  readonly node: HTMLUListElement;

  /** Emitted (as a callback) after the user picked a run. */
  onPicked: (() => void) | null = null;

  /** Bring the entries up to date with the model, in place. */
  render(): void {
    const model = this._model;
    const seen = new Set<string>();
    const nodes = model.runs.map(run => {
      seen.add(run.id);
      let item = this._items.get(run.id);
      if (!item) {
        item = createItem(run.id);
        this._items.set(run.id, item);
      }
      const selected = run.id === model.selectedId;
      item.node.dataset.status = run.status;
      item.node.classList.toggle('jp-mod-selected', selected);
      item.node.setAttribute('aria-selected', String(selected));
      setBadge(item.badge, run.status);
      setText(item.started, formatTime(run.started));
      setText(item.duration, formatDuration(runDuration(run)));
      setText(item.operators, plural(run.operators, 'Python operator'));
      setText(item.cell, run.cell || '(empty cell)');
      item.cell.title = run.cell;
      item.node.title = `Run ${run.id}`;
      return item.node;
    });
    for (const id of [...this._items.keys()]) {
      if (!seen.has(id)) {
        this._items.delete(id);
      }
    }
    setChildren(this.node, nodes);
  }

  private _select(target: EventTarget | null): void {
    const item = (target as HTMLElement | null)?.closest<HTMLElement>('.jp-icedtea-run-item');
    const id = item?.dataset.runId;
    if (!id) {
      return;
    }
    if (id !== this._model.selectedId) {
      void this._model.select(id);
    }
    this.onPicked?.();
  }

  private _onClick = (event: MouseEvent): void => {
    this._select(event.target);
  };

  private _onKey = (event: KeyboardEvent): void => {
    if (event.key === 'Enter' || event.key === ' ') {
      event.preventDefault();
      this._select(event.target);
    }
  };

  private _items = new Map<string, IItem>();
}

function createItem(id: string): IItem {
  const node = el('li', 'jp-icedtea-run-item');
  node.dataset.runId = id;
  node.tabIndex = 0;
  node.setAttribute('role', 'option');
  const item: IItem = {
    node,
    badge: badge('running'),
    started: el('span', 'jp-icedtea-run-started'),
    duration: el('span', 'jp-icedtea-run-duration'),
    operators: el('span', 'jp-icedtea-run-operators'),
    cell: el('div', 'jp-icedtea-run-cell')
  };
  const line = el('div', 'jp-icedtea-run-line');
  line.append(item.badge, item.started, item.duration, item.operators);
  node.append(line, item.cell);
  return item;
}
