import { el, formatCount, setText } from '../widgets/format';
import { pager } from '../widgets/pager';
import { LINEAGE_PAGE, LineageModel, sameRecord } from './lineageModel';
import { recordRow } from './recordRow';

/** Milliseconds of quiet typing before the filter asks the kernel. */
const FILTER_DELAY = 300;

/**
 * The cell's output rows (its last operator's), a page at a time, with a filter box:
 * a click on a row traces it back (`run.trace_back(at=(partition, position))`).
 */
export class OutputsView {
  constructor(model: LineageModel) {
    this._model = model;
    this.node = el('div', 'jp-icedtea-lineage-outputs');
    this._filter = el('input', 'jp-icedtea-lineage-filter');
    this._filter.type = 'search';
    this._filter.placeholder = 'Filter the output rows';
    this._filter.setAttribute('aria-label', 'Filter the output rows by their text');
    this._filter.addEventListener('input', this._onInput);
    this.node.append(this._title, this._filter, this._rows, this._pager);
  }

  readonly node: HTMLDivElement;

  render(): void {
    const model = this._model;
    const outputs = model.outputs;
    if (document.activeElement !== this._filter && this._filter.value !== model.filter) {
      this._filter.value = model.filter;
    }
    this.node.hidden = !outputs && !model.filter;
    if (!outputs) {
      this._rows.replaceChildren();
      this._pager.replaceChildren();
      return;
    }
    const { operator, page } = outputs;
    const filtered = model.filter ? ` matching “${model.filter}”` : '';
    setText(
      this._title,
      `Output rows of ${operator}: ${formatCount(page.total)}${filtered}. Pick one to trace it back.`
    );
    const rows: HTMLElement[] = page.rows.map(row => {
      const node = recordRow(row, [], () => void model.traceBack(row));
      node.classList.toggle('jp-mod-selected', sameRecord(model.row, row));
      node.title = 'Trace this row back to its source records';
      return node;
    });
    if (!rows.length) {
      rows.push(el('div', 'jp-icedtea-muted', model.filter ? 'No output row matches the filter.' : 'No output rows.'));
    }
    this._rows.replaceChildren(...rows);
    this._pager.replaceWith((this._pager = pager(page, LINEAGE_PAGE, start => void model.loadOutputs(start))));
  }

  dispose(): void {
    clearTimeout(this._timer);
  }

  private _onInput = () => {
    clearTimeout(this._timer);
    this._timer = setTimeout(() => void this._model.setFilter(this._filter.value.trim()), FILTER_DELAY);
  };

  private _model: LineageModel;
  private _filter: HTMLInputElement;
  private _title = el('div', 'jp-icedtea-lineage-heading');
  private _rows = el('div', 'jp-icedtea-lineage-rows');
  private _pager: HTMLElement = el('div', 'jp-icedtea-pager');
  private _timer: ReturnType<typeof setTimeout> | undefined;
}
