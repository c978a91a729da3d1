import { el, formatCount, setData, setText, syncChildren } from '../widgets/format';
import { ModelView } from '../widgets/modelView';
import type { ISkewFlag, ISkewKey } from '../comm/protocol';
import type { SkewModel } from './model';

/**
 * The heavy keys of the partition selected in the chart (of every partition, when none
 * is), with the partitions the skew rules flag and why. Live, both lists change in place
 * (`syncChildren`): only the text that changed.
 */
export class SkewKeys extends ModelView<SkewModel> {
  constructor(model: SkewModel) {
    super(model);
    this.addClass('jp-icedtea-SkewKeys');
    this._title = el('div', 'jp-icedtea-skew-keys-title');
    this._flagList = el('ul', 'jp-icedtea-skew-flags');
    this._table = el('table', 'jp-icedtea-skew-keys');
    this._head = el('tr');
    this._rows = el('tbody');
    this._table.append(el('thead'), this._rows);
    this._table.tHead!.append(this._head);
    this._bound = el('div', 'jp-icedtea-muted');
    this.node.append(this._flagList, this._title, this._table, this._bound);
    this._follow();
  }

  protected _render(): void {
    const model = this._model;
    const report = model.report;
    const part = model.partition;
    setData(this.node, 'partition', part === null ? '' : String(part));
    syncChildren(this._flagList, model.partitionFlags, () => el('li', 'jp-icedtea-skew-flag'), fillFlag);
    const keys = model.partitionKeys;
    const where = part === null ? 'every partition' : `partition ${part}`;
    setText(
      this._title,
      !report ? '' : report.recorded ? `Heavy keys of ${where}` : 'No key counts: record the cell with %%icedtea --skew'
    );
    const columns = part === null ? ['key', 'records', 'share', 'partition'] : ['key', 'records', 'share'];
    syncChildren(
      this._head,
      columns,
      () => el('th'),
      (th, name) => setText(th, name)
    );
    syncChildren(
      this._rows,
      keys,
      () => el('tr', 'jp-icedtea-skew-key'),
      (row, key) => fillKey(row, key, columns.length)
    );
    this._table.hidden = keys.length === 0;
    // the kernel's words for its numbers: exact, lower bounds, or estimates with intervals
    setText(this._bound, report && report.recorded ? report.bound : '');
  }

  private _title: HTMLDivElement;
  private _flagList: HTMLUListElement;
  private _table: HTMLTableElement;
  private _head: HTMLTableRowElement;
  private _rows: HTMLTableSectionElement;
  private _bound: HTMLDivElement;
}

const KEY_NAME = 'jp-icedtea-skew-key-name';

function fillFlag(item: HTMLLIElement, flag: ISkewFlag): void {
  setText(item, `partition ${flag.partition} (${flag.rule}): ${flag.why}`);
  setData(item, 'partition', String(flag.partition));
  setData(item, 'rule', flag.rule);
}

/** A key's records: exact (`count`, or `count–count + error`), or an estimate and its interval. */
function countText(key: ISkewKey): string {
  if (key.exact === false) {
    return `~${formatCount(key.count)} (${formatCount(key.low)}–${formatCount(key.high)})`;
  }
  return key.error ? `${formatCount(key.count)}–${formatCount(key.count + key.error)}` : formatCount(key.count);
}

/** A key's row: its name, records, share and (of every partition) its partition. */
function fillKey(row: HTMLTableRowElement, key: ISkewKey, columns: number): void {
  setData(row, 'partition', String(key.partition));
  const texts = [key.key, countText(key), `${(key.share * 100).toFixed(1)}%`, String(key.partition)];
  syncChildren(
    row,
    texts.slice(0, columns),
    () => el('td'),
    (cell, text) => setText(cell, text)
  );
  if (row.cells[0].className !== KEY_NAME) {
    row.cells[0].className = KEY_NAME;
  }
}
