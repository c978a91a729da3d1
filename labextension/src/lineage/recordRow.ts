import type { ILineageRecord } from '../comm/protocol';
import { pyRepr } from '../comm/tagged';
import { el } from '../widgets/format';

/** A button in a record's row: `data-action` names it for tests and styles. */
export interface IRecordAction {
  label: string;
  action: string;
  title: string;
  run: () => void;
}

/**
 * One lineage record as a row: where it is (operator, partition, position) and its
 * repr, with its buttons; the whole row is a button when `select` is given.
 */
export function recordRow(record: ILineageRecord, actions: IRecordAction[], select?: () => void): HTMLElement {
  const row = el(select ? 'button' : 'div', 'jp-icedtea-lineage-record');
  if (row instanceof HTMLButtonElement) {
    row.type = 'button';
    row.addEventListener('click', select!);
  }
  row.dataset.operator = record.operator;
  row.dataset.partition = String(record.partition);
  row.dataset.position = String(record.position);
  const where = el('span', 'jp-icedtea-lineage-where jp-icedtea-muted', `p${record.partition} #${record.position}`);
  where.title = `${record.operator}, partition ${record.partition}, position ${record.position}`;
  const text = pyRepr(record.record, 200);
  const value = el('span', 'jp-icedtea-lineage-value', text);
  value.title = pyRepr(record.record, 2000);
  row.append(where, value);
  for (const action of actions) {
    const button = el('button', 'jp-icedtea-button jp-icedtea-lineage-action', action.label);
    button.type = 'button';
    button.dataset.action = action.action;
    button.title = action.title;
    button.addEventListener('click', event => {
      event.stopPropagation();
      action.run();
    });
    row.append(button);
  }
  return row;
}
