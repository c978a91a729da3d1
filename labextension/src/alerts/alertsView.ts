import type { IAlertGroup } from '../comm/protocol';
import { el, formatCount, setChildren, setText } from '../widgets/format';
import { ModelView } from '../widgets/modelView';
import { alertsLabel, type AlertsModel } from './model';

/**
 * The Alerts section: every tool's alerts on the selected run, live, one block per
 * tool, check and operator (its count, latest message and records with their
 * partitions): `run.alerts()` in the sidebar. The section's title carries the count.
 */
export class AlertsView extends ModelView<AlertsModel> {
  constructor(model: AlertsModel) {
    super(model, { node: el('div', 'jp-icedtea-AlertsView') });
    this._empty = el('div', 'jp-icedtea-muted', 'No alerts on this run.');
    this._problem = el('div', 'jp-icedtea-problem');
    this._problem.setAttribute('role', 'alert');
    this._list = el('div', 'jp-icedtea-alert-groups');
    this.node.append(this._problem, this._empty, this._list);
    this._follow();
  }

  protected onAfterAttach(): void {
    this._render();
  }

  protected _render(): void {
    const model = this._model;
    setText(this._problem, model.error ?? '');
    this._problem.hidden = !model.error;
    this._empty.hidden = model.groups.length > 0;
    this.node.dataset.total = String(model.total);
    setChildren(this._list, model.groups.map(groupNode));
    if (this.parent) {
      this.parent.title.label = alertsLabel(model.total);
    }
  }

  private _empty: HTMLDivElement;
  private _problem: HTMLDivElement;
  private _list: HTMLDivElement;
}

function groupNode(group: IAlertGroup): HTMLElement {
  const node = el('details', `jp-icedtea-alert-group jp-icedtea-alert-${group.level}`);
  node.dataset.tool = group.tool;
  node.open = true;
  const summary = el('summary', 'jp-icedtea-alert-summary');
  const where = group.operator ? ` on ${group.operator}` : '';
  summary.append(
    el('span', 'jp-icedtea-alert-tool', group.tool),
    el('span', 'jp-icedtea-alert-check', ` ${group.check ?? group.message}${where}`),
    el('span', 'jp-icedtea-alert-count', ` ×${formatCount(group.count)}`)
  );
  node.append(summary, el('div', 'jp-icedtea-alert-message', group.message));
  const records = el('ul', 'jp-icedtea-alert-records');
  for (const record of group.records) {
    const item = el('li', 'jp-icedtea-alert-record');
    const partition = record.partition === null ? '' : `p${record.partition} `;
    item.append(el('span', 'jp-icedtea-muted', partition), el('code', undefined, record.repr));
    item.title = record.message;
    records.append(item);
  }
  if (group.records.length) {
    node.append(records);
  }
  return node;
}
