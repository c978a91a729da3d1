import { el, formatCount, setChildren, setText } from '../widgets/format';
import { ModelView } from '../widgets/modelView';
import type { SkewModel } from './model';

/**
 * The heavy keys of the partition selected in the chart (of every partition, when none
 * is), with the partitions the skew rules flag and why.
 */
export class SkewKeys extends ModelView<SkewModel> {
  constructor(model: SkewModel) {
    super(model);
    this.addClass('jp-icedtea-SkewKeys');
    this._title = el('div', 'jp-icedtea-skew-keys-title');
    this._flagList = el('ul', 'jp-icedtea-skew-flags');
    this._table = el('table', 'jp-icedtea-skew-keys');
    this._bound = el('div', 'jp-icedtea-muted');
    this.node.append(this._flagList, this._title, this._table, this._bound);
    this._follow();
  }

  protected _render(): void {
    const model = this._model;
    const report = model.report;
    const part = model.partition;
    this.node.dataset.partition = part === null ? '' : String(part);
    setChildren(
      this._flagList,
      model.partitionFlags.map(flag => {
        const item = el('li', 'jp-icedtea-skew-flag', `partition ${flag.partition} (${flag.rule}): ${flag.why}`);
        item.dataset.partition = String(flag.partition);
        item.dataset.rule = flag.rule;
        return item;
      })
    );
    const keys = model.partitionKeys;
    const where = part === null ? 'every partition' : `partition ${part}`;
    setText(
      this._title,
      !report ? '' : report.recorded ? `Heavy keys of ${where}` : 'No key counts: record the cell with %%icedtea --skew'
    );
    const head = el('tr');
    head.append(el('th', undefined, 'key'), el('th', undefined, 'records'), el('th', undefined, 'share'));
    if (part === null) {
      head.append(el('th', undefined, 'partition'));
    }
    const rows = keys.map(key => {
      const row = el('tr', 'jp-icedtea-skew-key');
      row.dataset.partition = String(key.partition);
      row.append(
        el('td', 'jp-icedtea-skew-key-name', key.key),
        el('td', undefined, formatCount(key.count)),
        el('td', undefined, `${(key.share * 100).toFixed(1)}%`)
      );
      if (part === null) {
        row.append(el('td', undefined, String(key.partition)));
      }
      return row;
    });
    this._table.replaceChildren(...(keys.length ? [head, ...rows] : []));
    this._table.hidden = keys.length === 0;
    setText(
      this._bound,
      report && report.recorded
        ? `Counts are lower bounds: each key has at most ${formatCount(report.error)} more of the ${formatCount(report.records)} records counted` +
            (report.estimated
              ? `; the keys of ${formatCount(report.estimated)} of them were sampled (one chunk in 16): estimates.`
              : '.')
        : ''
    );
  }

  private _title: HTMLDivElement;
  private _flagList: HTMLUListElement;
  private _table: HTMLTableElement;
  private _bound: HTMLDivElement;
}
