import {
  badge,
  el,
  formatCount,
  formatRate,
  formatShortCount,
  setBadge,
  setChildren,
  setText
} from '../widgets/format';
import type { RunsModel } from './model';
import { operatorRate, operatorStatus, operatorTitle, partsText } from './texts';
import type { IOperatorNode, IOperatorProgress, IPartitionRow, IRunSummary } from '../comm/protocol';
import { VirtualList } from '../widgets/virtualList';

/** Partition rows of one expanded operator. */
interface IExpanded {
  rows: IPartitionRow[] | null;
  error: string | null;
  fetchedAt: number;
  loading: boolean;
  /** The row holding the partitions' list, and the list (made once). */
  holder: HTMLTableRowElement | null;
  list: VirtualList<IPartitionRow> | null;
  /** The rows the list shows now (null: to be put in). */
  shown: IPartitionRow[] | null;
}

/** Minimum milliseconds between two fetches of an expanded operator's partitions. */
const PARTITIONS_REFRESH_MS = 1000;
const PARTITION_ROW_HEIGHT = 22;

/**
 * The selected run's Python operators with live counts, θ and G(θ) marked; a click
 * on an operator shows its partitions (a windowed list: 200 partitions stay cheap).
 * Not a widget: `RunView` puts its node in place.
 */
export class OperatorsTable {
  constructor(private readonly _model: RunsModel) {
    this.node = el('div', 'jp-icedtea-operators-section');
    this._noOperators = el('div', 'jp-icedtea-muted');
    this._legend = el('div', 'jp-icedtea-legend jp-icedtea-operators-legend');
    this._thetaLegend = el('span', 'jp-icedtea-legend-item');
    this._thetaLegend.append(
      el('span', 'jp-icedtea-theta-mark', 'θ'),
      ' the interesting operator; ',
      el('span', 'jp-icedtea-g-swatch'),
      ' G(θ): θ and downstream, whose states are snapshotted'
    );
    const parts = el('span', 'jp-icedtea-legend-item');
    parts.append(
      'Parts: partitions ',
      el('span', 'jp-icedtea-parts-mark', '✓'),
      ' done, ',
      el('span', 'jp-icedtea-parts-mark jp-icedtea-parts-running-mark', '▶'),
      ' running, ',
      el('span', 'jp-icedtea-parts-mark jp-icedtea-parts-failed-mark', '✗'),
      ' failed'
    );
    const rate = el('span', 'jp-icedtea-legend-item');
    rate.append('Rate: records in per second, live; ', el('i', undefined, 'in italics'), ' the average once ended');
    this._legend.append(this._thetaLegend, parts, rate);
    this._table = el('table', 'jp-icedtea-operators');
    this._table.setAttribute('aria-label', 'Python operators');
    this._tbody = el('tbody');
    this._table.append(createTableHead(), this._tbody);
    this.node.append(this._noOperators, this._table, this._legend);
    this.node.addEventListener('click', this._onClick);
    this.node.addEventListener('keydown', this._onKey);
  }

  readonly node: HTMLElement;

  /** Another run is shown: forget what was expanded. */
  reset(): void {
    for (const state of this._expanded.values()) {
      state.list?.dispose();
    }
    this._expanded.clear();
    this._rows.clear();
  }

  /** Refetch expanded operators' partitions (every second while running; `force`: now). */
  refreshPartitions(force: boolean): void {
    const now = Date.now();
    for (const [operator, state] of this._expanded) {
      if (!state.loading && (force || now - state.fetchedAt >= PARTITIONS_REFRESH_MS)) {
        void this._fetch(operator);
      }
    }
  }

  render(summary: IRunSummary): void {
    this._summary = summary;
    const none = summary.progress.length === 0;
    setText(
      this._noOperators,
      none
        ? summary.status === 'running'
          ? 'No Python operator has run yet.'
          : 'This run has no Python operators.'
        : ''
    );
    this._noOperators.hidden = !none;
    this._table.hidden = none;
    const nodes = new Map(summary.dag.operators.map(op => [op.name, op]));
    this._legend.hidden = none;
    this._thetaLegend.hidden = !summary.dag.operators.some(op => op.theta);
    const rows: HTMLElement[] = [];
    const seen = new Set<string>();
    for (const progress of summary.progress) {
      seen.add(progress.operator);
      let row = this._rows.get(progress.operator);
      if (!row) {
        row = createOperatorRow(progress.operator);
        this._rows.set(progress.operator, row);
      }
      const expanded = this._expanded.get(progress.operator);
      updateOperatorRow(row, summary, progress, nodes.get(progress.operator), expanded !== undefined);
      rows.push(row.node);
      if (expanded) {
        rows.push(this._partitionsRow(expanded));
      }
    }
    for (const name of [...this._rows.keys()]) {
      if (!seen.has(name)) {
        this._rows.delete(name);
      }
    }
    setChildren(this._tbody, rows);
    for (const expanded of this._expanded.values()) {
      if (expanded.list && expanded.rows && expanded.shown !== expanded.rows) {
        expanded.shown = expanded.rows;
        expanded.list.setItems(expanded.rows);
      }
    }
  }

  private _partitionsRow(expanded: IExpanded): HTMLTableRowElement {
    if (!expanded.holder) {
      expanded.holder = el('tr', 'jp-icedtea-partitions-holder');
      const td = expanded.holder.appendChild(el('td'));
      td.colSpan = 5;
    }
    const td = expanded.holder.firstElementChild as HTMLTableCellElement;
    const note =
      expanded.error ??
      (!expanded.rows ? 'Loading partitions…' : !expanded.rows.length ? 'No partition has run yet.' : null);
    if (note !== null) {
      const cls = expanded.error ? 'jp-icedtea-partition-error' : 'jp-icedtea-muted';
      td.replaceChildren(el('div', `jp-icedtea-partition-note ${cls}`, note));
      return expanded.holder;
    }
    if (!expanded.list) {
      expanded.list = new VirtualList<IPartitionRow>({
        rowHeight: PARTITION_ROW_HEIGHT,
        maxHeight: 220,
        className: 'jp-icedtea-partition-list',
        label: 'Partitions',
        create: createPartitionRow,
        update: updatePartitionRow
      });
    }
    setChildren(td, [expanded.list.node]);
    return expanded.holder;
  }

  private _toggle(operator: string): void {
    const expanded = this._expanded.get(operator);
    if (expanded) {
      expanded.list?.dispose();
      this._expanded.delete(operator);
    } else {
      this._expanded.set(operator, {
        rows: null,
        error: null,
        fetchedAt: 0,
        loading: false,
        holder: null,
        list: null,
        shown: null
      });
      void this._fetch(operator);
    }
    this._rerender();
  }

  private async _fetch(operator: string): Promise<void> {
    const state = this._expanded.get(operator);
    if (!state) {
      return;
    }
    const runId = this._model.selectedId;
    state.loading = true;
    state.fetchedAt = Date.now();
    try {
      state.rows = await this._model.partitions(operator);
      state.error = null;
    } catch (reason) {
      state.error = `Cannot load the partitions: ${reason instanceof Error ? reason.message : String(reason)}`;
    } finally {
      state.loading = false;
    }
    if (this._model.selectedId === runId && this._expanded.get(operator) === state) {
      this._rerender();
    }
  }

  private _rerender(): void {
    if (this._summary) {
      this.render(this._summary);
    }
  }

  private _rowOperator(target: EventTarget | null): string | undefined {
    return (target as HTMLElement | null)?.closest<HTMLElement>('.jp-icedtea-op-row')?.dataset.operator;
  }

  private _onClick = (event: MouseEvent): void => {
    const operator = this._rowOperator(event.target);
    if (operator !== undefined) {
      this._toggle(operator);
    }
  };

  private _onKey = (event: KeyboardEvent): void => {
    if (event.key !== 'Enter' && event.key !== ' ') {
      return;
    }
    const operator = this._rowOperator(event.target);
    if (operator !== undefined) {
      event.preventDefault();
      this._toggle(operator);
    }
  };

  private _summary: IRunSummary | null = null;
  private _expanded = new Map<string, IExpanded>();
  private _rows = new Map<string, IOperatorRow>();
  private _noOperators: HTMLElement;
  private _legend: HTMLElement;
  private _thetaLegend: HTMLElement;
  private _table: HTMLTableElement;
  private _tbody: HTMLTableSectionElement;
}

function createTableHead(): HTMLTableSectionElement {
  const head = el('thead');
  const row = head.appendChild(el('tr'));
  for (const [label, tip, cls] of [
    ['Operator', 'status and name; click to show the partitions', 'jp-icedtea-op-name'],
    ['In', 'records in', 'jp-icedtea-num'],
    ['Out', 'records out', 'jp-icedtea-num'],
    ['Parts', 'partitions: ✓ done, ▶ running, ✗ failed', 'jp-icedtea-num'],
    ['Rate', 'records in per second: live over the running partitions, then (in italics) the average', 'jp-icedtea-num']
  ]) {
    const th = row.appendChild(el('th', cls, label));
    th.title = tip;
    th.scope = 'col';
  }
  return head;
}

interface IOperatorRow {
  node: HTMLTableRowElement;
  caret: HTMLSpanElement;
  theta: HTMLSpanElement;
  nameCell: HTMLTableCellElement;
  badge: HTMLSpanElement;
  recordsIn: HTMLTableCellElement;
  recordsOut: HTMLTableCellElement;
  parts: HTMLTableCellElement;
  done: HTMLSpanElement;
  running: HTMLSpanElement;
  failed: HTMLSpanElement;
  rate: HTMLTableCellElement;
}

function createOperatorRow(operator: string): IOperatorRow {
  const row: IOperatorRow = {
    node: el('tr', 'jp-icedtea-op-row'),
    caret: el('span', 'jp-icedtea-caret'),
    theta: el('span', 'jp-icedtea-theta-mark', 'θ'),
    nameCell: el('td', 'jp-icedtea-op-name'),
    badge: badge('pending'),
    recordsIn: el('td', 'jp-icedtea-records-in jp-icedtea-num'),
    recordsOut: el('td', 'jp-icedtea-records-out jp-icedtea-num'),
    parts: el('td', 'jp-icedtea-parts jp-icedtea-num'),
    done: el('span', 'jp-icedtea-parts-done'),
    running: el('span', 'jp-icedtea-parts-running'),
    failed: el('span', 'jp-icedtea-parts-failed'),
    rate: el('td', 'jp-icedtea-rate jp-icedtea-num')
  };
  row.node.dataset.operator = operator;
  row.node.tabIndex = 0;
  row.node.title = 'Show or hide the partitions of this operator';
  row.badge.classList.add('jp-icedtea-badge-compact');
  row.theta.title = 'θ: the interesting operator';
  const label = el('span', 'jp-icedtea-op-label', operator);
  row.nameCell.append(row.caret, row.badge, label, row.theta);
  row.parts.append(row.done, el('span', 'jp-icedtea-parts-mark', '✓'), row.running, row.failed);
  row.node.append(row.nameCell, row.recordsIn, row.recordsOut, row.parts, row.rate);
  return row;
}

function updateOperatorRow(
  row: IOperatorRow,
  summary: IRunSummary,
  p: IOperatorProgress,
  node: IOperatorNode | undefined,
  expanded: boolean
): void {
  const status = operatorStatus(summary, p);
  row.node.dataset.status = status;
  row.node.setAttribute('aria-expanded', String(expanded));
  row.node.classList.toggle('jp-icedtea-mod-theta', !!node?.theta);
  row.node.classList.toggle('jp-icedtea-mod-in-g', !!node?.in_g);
  row.node.dataset.theta = String(!!node?.theta);
  row.node.dataset.inG = String(!!node?.in_g);
  row.theta.hidden = !node?.theta;
  setText(row.caret, expanded ? '▾' : '▸');
  row.nameCell.title = operatorTitle(p, status, node);
  setBadge(row.badge, status);
  row.badge.classList.add('jp-icedtea-badge-compact');
  row.badge.title = status;
  setText(row.recordsIn, formatShortCount(p.records_in));
  row.recordsIn.title = `${formatCount(p.records_in)} records in`;
  setText(row.recordsOut, formatShortCount(p.records_out));
  row.recordsOut.title = `${formatCount(p.records_out)} records out`;
  const parts = partsText(p);
  setText(row.done, String(p.done));
  setText(row.running, p.running ? ` ${p.running}▶` : '');
  setText(row.failed, p.failed ? ` ${p.failed}✗` : '');
  row.failed.classList.toggle('jp-mod-nonzero', p.failed > 0);
  row.parts.title = parts;
  row.parts.setAttribute('aria-label', parts);
  const rate = operatorRate(summary, p);
  setText(row.rate, rate.text);
  row.rate.title = rate.title;
  row.rate.classList.toggle('jp-icedtea-mod-average', rate.average);
}

function createPartitionRow(): HTMLElement {
  const row = el('div', 'jp-icedtea-partition-row');
  row.setAttribute('role', 'listitem');
  const dot = badge('ok');
  dot.classList.add('jp-icedtea-badge-compact');
  const name = el('span', 'jp-icedtea-partition-name');
  name.append(dot, el('span', 'jp-icedtea-partition-label'));
  row.append(
    name,
    el('span', 'jp-icedtea-num jp-icedtea-partition-in'),
    el('span', 'jp-icedtea-num jp-icedtea-partition-out'),
    el('span', 'jp-icedtea-muted jp-icedtea-num jp-icedtea-partition-stage'),
    el('span', 'jp-icedtea-num jp-icedtea-partition-rate')
  );
  return row;
}

function updatePartitionRow(row: HTMLElement, r: IPartitionRow): void {
  row.dataset.status = r.status;
  row.dataset.partition = String(r.partition);
  const [name, recordsIn, recordsOut, stage, rate] = Array.from(row.children) as HTMLElement[];
  const dot = name.firstElementChild as HTMLElement;
  setBadge(dot, r.status);
  dot.classList.add('jp-icedtea-badge-compact');
  dot.title = r.status;
  setText(name.lastElementChild!, `p${r.partition}` + (r.attempt ? ` try ${r.attempt}` : ''));
  const where =
    `stage ${r.stage}, partition ${r.partition}, attempt ${r.attempt}` +
    (r.task !== null && r.task !== undefined ? `, task ${r.task}` : '');
  name.title = where;
  setText(recordsIn, `in ${formatShortCount(r.records_in)}`);
  setText(recordsOut, `out ${formatShortCount(r.records_out)}`);
  setText(stage, `stage ${r.stage}`);
  const live = r.status === 'running';
  const average = !live && typeof r.seconds === 'number' && r.seconds > 0 ? (r.records_in ?? 0) / r.seconds : 0;
  const speed = formatRate(live ? (r.rate ?? 0) : average);
  setText(rate, speed);
  rate.classList.toggle('jp-icedtea-mod-average', !live);
  row.title =
    `${where}: ${formatCount(r.records_in)} records in, ${formatCount(r.records_out)} out, ${r.status}` +
    (speed ? `, ${speed}${live ? '' : ' on average'}` : '');
}
