import type { Message } from '@lumino/messaging';
import { Widget } from '@lumino/widgets';

import type { ISampleResult } from '../comm/protocol';
import { RedrawWhenShown } from '../widgets/redrawWhenShown';
import { el, setChildren, setText } from '../widgets/format';
import type { Edge, SamplesModel } from './model';

/** A cell's text: strings as they are, other values as JSON. */
function cellText(value: unknown): string {
  return typeof value === 'string' ? value : value === null ? 'null' : JSON.stringify(value);
}

/** A sample as a table: its fields as columns, one row a record. */
function sampleTable(sample: ISampleResult): HTMLTableElement {
  const table = el('table', 'jp-icedtea-sample-table');
  table.setAttribute('aria-label', `Sample of ${sample.operator}'s input`);
  const head = el('tr');
  head.append(...sample.columns.map(c => el('th', undefined, c)));
  const body = el('tbody');
  body.append(
    ...sample.rows.map(row => {
      const tr = el('tr');
      tr.append(...row.map(v => el('td', undefined, cellText(v))));
      return tr;
    })
  );
  const thead = el('thead');
  thead.append(head);
  table.append(thead, body);
  return table;
}

/**
 * The DAG's edges into Python operators; a click on an edge opens its sample below it
 * (the downstream operator's input, `run.samples(operator)`).
 */
export class SamplesView extends Widget {
  constructor(private readonly _model: SamplesModel) {
    super();
    this.addClass('jp-icedtea-SamplesView');
    this._note = el('div', 'jp-icedtea-muted');
    this._list = el('ul', 'jp-icedtea-edges');
    this._list.setAttribute('aria-label', 'Edges of the DAG');
    this.node.append(this._note, this._list);
    _model.changed.connect(this._onChanged, this);
    this._render();
  }

  dispose(): void {
    this._model.dispose();
    super.dispose();
  }

  protected onAfterShow(msg: Message): void {
    super.onAfterShow(msg);
    this._redraw.shown();
  }

  /** Drawn now, or once shown if its section is collapsed. */
  private _onChanged(): void {
    this._redraw.request();
  }

  private _render(): void {
    const edges = this._model.edges;
    setText(
      this._note,
      !this._model.runs.selected
        ? 'No run selected.'
        : edges.length === 0
          ? 'No edge into a Python operator.'
          : 'Click an edge: a uniform sample of the records that crossed it (--agent samples).'
    );
    // Made again only when they change: a click must find the node it pressed on.
    const sample = this._model.sample;
    const key = JSON.stringify([edges, this._model.opened, sample?.run, sample?.operator, this._model.error]);
    if (key !== this._shown) {
      this._shown = key;
      setChildren(
        this._list,
        edges.map(edge => this._edgeItem(edge))
      );
    }
  }

  private _edgeItem(edge: Edge): HTMLLIElement {
    const item = el('li', 'jp-icedtea-edge-item');
    const button = el('button', 'jp-icedtea-edge', `${edge[0]} → ${edge[1]}`);
    button.type = 'button';
    button.dataset.edge = `${edge[0]}->${edge[1]}`;
    const opened = this._model.opened;
    const open = opened !== null && opened[0] === edge[0] && opened[1] === edge[1];
    button.setAttribute('aria-expanded', String(open));
    button.addEventListener('click', () => void this._model.open(edge));
    item.append(button);
    if (open) {
      const sample = this._model.sample;
      const error = this._model.error;
      item.append(
        sample
          ? sampleTable(sample)
          : el('div', error ? 'jp-icedtea-error' : 'jp-icedtea-muted', error ?? 'Loading the sample…')
      );
    }
    return item;
  }

  private _note: HTMLDivElement;
  private _list: HTMLUListElement;
  private _shown = '';

  private readonly _redraw = new RedrawWhenShown(this, () => this._render());
}
