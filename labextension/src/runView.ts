import { Widget } from '@lumino/widgets';

import {
  badge,
  el,
  formatCount,
  formatDuration,
  formatRate,
  formatTime,
  runDuration,
  setBadge,
  setChildren,
  setText
} from './format';
import type { RunsModel } from './model';
import type { IAlert, IOperatorProgress, IPartitionRow, IRunError, IRunSummary } from './protocol';

/** Partition rows of one expanded operator. */
interface IExpanded {
  rows: IPartitionRow[] | null;
  error: string | null;
  fetchedAt: number;
  loading: boolean;
  /** The table rows made from `rows` (null: to be made). */
  nodes: HTMLElement[] | null;
}

/** Minimum milliseconds between two fetches of an expanded operator's partitions. */
const PARTITIONS_REFRESH_MS = 1000;

/**
 * The selected run: its Python operators with live counts, the error that failed
 * it and its warnings. A click on an operator expands its partitions.
 */
export class RunView extends Widget {
  constructor(model: RunsModel) {
    super();
    this._model = model;
    this.addClass('jp-icedtea-RunView');
    this._header = createHeader();
    this._loading = el('div', 'jp-icedtea-loading', 'Loading the run…');
    this._error = el('div', 'jp-icedtea-error');
    this._error.setAttribute('role', 'alert');
    this._warnings = el('div', 'jp-icedtea-warnings');
    this._alerts = el('div', 'jp-icedtea-alerts');
    this._operators = el('div', 'jp-icedtea-operators-section');
    this._noOperators = el('div', 'jp-icedtea-muted');
    this._table = el('table', 'jp-icedtea-operators');
    this._tbody = el('tbody');
    this._table.append(createTableHead(), this._tbody);
    this._operators.append(el('h3', 'jp-icedtea-section-title', 'Python operators'), this._noOperators, this._table);
    this._operators.addEventListener('click', this._onClick);
    this._operators.addEventListener('keydown', this._onKey);
    model.changed.connect(this._onChanged, this);
    this._onChanged();
  }

  dispose(): void {
    if (this.isDisposed) {
      return;
    }
    this._model.changed.disconnect(this._onChanged, this);
    super.dispose();
  }

  /** Bring the view up to date with the selected run, in place. */
  render(): void {
    const summary = this._model.selected;
    if (!summary) {
      const loading = this._model.selectedId !== null;
      setChildren(this.node, loading ? [this._loading] : []);
      this.setHidden(!loading);
      return;
    }
    this.setHidden(false);
    this._renderHeader(summary);
    const children: HTMLElement[] = [this._header.root];
    if (this._renderKeyed(this._error, summary.error, error => this._fillError(error))) {
      children.push(this._error);
    }
    if (this._renderKeyed(this._warnings, summary.warnings.length ? summary.warnings : null, w => fillList(this._warnings, 'Warnings', w))) {
      children.push(this._warnings);
    }
    this._renderOperators(summary);
    children.push(this._operators);
    if (this._renderKeyed(this._alerts, summary.alerts.length ? summary.alerts : null, a => fillList(this._alerts, 'Alerts', a.map(alertText)))) {
      children.push(this._alerts);
    }
    setChildren(this.node, children);
  }

  private _onChanged(): void {
    const summary = this._model.selected;
    const runId = this._model.selectedId;
    if (runId !== this._runId) {
      this._runId = runId;
      this._expanded.clear();
      this._rows.clear();
      this._header.code.open = false;
    }
    if (summary && summary.status === 'running') {
      this._refreshPartitions(false);
    } else if (summary && summary.status !== this._lastStatus) {
      this._refreshPartitions(true); // the final counts
    }
    this._lastStatus = summary?.status ?? null;
    this.render();
  }

  private _renderHeader(summary: IRunSummary): void {
    const h = this._header;
    setBadge(h.badge, summary.status);
    setText(h.id, summary.id);
    setText(h.started, formatTime(summary.started));
    setText(h.duration, formatDuration(runDuration(summary)));
    setText(h.codeSummary, summary.cell.split('\n').find(l => l.trim()) ?? '(empty cell)');
    setText(h.codePre, summary.cell);
    setText(h.path, summary.path);
  }

  /**
   * Rebuild `node` with `fill` when `value` differs from what it shows (a JSON key);
   * returns whether there is anything to show.
   */
  private _renderKeyed<T>(node: HTMLElement, value: T | null, fill: (value: T) => void): boolean {
    const key = value === null ? '' : JSON.stringify(value);
    if (node.dataset.key !== key) {
      node.dataset.key = key;
      node.replaceChildren();
      if (value !== null) {
        fill(value);
      }
    }
    return value !== null;
  }

  private _fillError(error: IRunError): void {
    const box = this._error;
    const where: string[] = [];
    if (error.operator !== null && error.operator !== undefined) {
      where.push(`operator ${error.operator}`);
    }
    if (error.partition !== null && error.partition !== undefined) {
      where.push(`partition ${error.partition}`);
    }
    box.appendChild(el('div', 'jp-icedtea-error-title', where.length ? `Failed in ${where.join(', ')}` : 'Failed'));
    const exception = [error.exception, error.message].filter(Boolean).join(': ');
    if (exception) {
      box.appendChild(el('div', 'jp-icedtea-error-message', exception));
    }
    if (error.record && error.record.repr !== undefined) {
      const record = el('div', 'jp-icedtea-error-record');
      record.append(el('span', 'jp-icedtea-label', 'Record: '), el('code', undefined, String(error.record.repr)));
      if (error.record.type) {
        record.append(el('span', 'jp-icedtea-muted', ` (${error.record.type})`));
      }
      box.appendChild(record);
    }
    if (error.traceback) {
      const details = el('details', 'jp-icedtea-error-traceback');
      details.append(el('summary', undefined, 'Traceback'), el('pre', undefined, error.traceback));
      box.appendChild(details);
    }
  }

  private _renderOperators(summary: IRunSummary): void {
    const none = summary.progress.length === 0;
    setText(
      this._noOperators,
      none ? (summary.status === 'running' ? 'No Python operator has run yet.' : 'This run has no Python operators.') : ''
    );
    this._noOperators.hidden = !none;
    this._table.hidden = none;
    const apis = new Map(summary.dag.operators.map(op => [op.name, op.api]));
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
      updateOperatorRow(row, summary, progress, apis.get(progress.operator), expanded !== undefined);
      rows.push(row.node);
      if (expanded) {
        if (expanded.nodes === null) {
          expanded.nodes = partitionRows(expanded);
        }
        rows.push(...expanded.nodes);
      }
    }
    for (const name of [...this._rows.keys()]) {
      if (!seen.has(name)) {
        this._rows.delete(name);
      }
    }
    setChildren(this._tbody, rows);
  }

  private _toggle(operator: string): void {
    if (this._expanded.has(operator)) {
      this._expanded.delete(operator);
    } else {
      this._expanded.set(operator, { rows: null, error: null, fetchedAt: 0, loading: false, nodes: null });
      void this._fetch(operator);
    }
    this.render();
  }

  private _refreshPartitions(force: boolean): void {
    const now = Date.now();
    for (const [operator, state] of this._expanded) {
      if (!state.loading && (force || now - state.fetchedAt >= PARTITIONS_REFRESH_MS)) {
        void this._fetch(operator);
      }
    }
  }

  private async _fetch(operator: string): Promise<void> {
    const state = this._expanded.get(operator);
    if (!state) {
      return;
    }
    const runId = this._runId;
    state.loading = true;
    state.fetchedAt = Date.now();
    try {
      state.rows = await this._model.partitions(operator);
      state.error = null;
    } catch (reason) {
      state.error = `Cannot load the partitions: ${reason instanceof Error ? reason.message : String(reason)}`;
    } finally {
      state.loading = false;
      state.nodes = null;
    }
    if (this._runId === runId && this._expanded.get(operator) === state && !this.isDisposed) {
      this.render();
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

  private _model: RunsModel;
  private _runId: string | null = null;
  private _lastStatus: string | null = null;
  private _expanded = new Map<string, IExpanded>();
  private _rows = new Map<string, IOperatorRow>();
  private _header: IHeader;
  private _loading: HTMLElement;
  private _error: HTMLElement;
  private _warnings: HTMLElement;
  private _alerts: HTMLElement;
  private _operators: HTMLElement;
  private _noOperators: HTMLElement;
  private _table: HTMLTableElement;
  private _tbody: HTMLTableSectionElement;
}

interface IHeader {
  root: HTMLElement;
  badge: HTMLSpanElement;
  id: HTMLSpanElement;
  started: HTMLSpanElement;
  duration: HTMLSpanElement;
  code: HTMLDetailsElement;
  codeSummary: HTMLElement;
  codePre: HTMLPreElement;
  path: HTMLDivElement;
}

function createHeader(): IHeader {
  const header: IHeader = {
    root: el('div', 'jp-icedtea-run-header'),
    badge: badge('running'),
    id: el('span', 'jp-icedtea-run-id'),
    started: el('span', 'jp-icedtea-run-started'),
    duration: el('span', 'jp-icedtea-run-duration'),
    code: el('details', 'jp-icedtea-run-code'),
    codeSummary: el('summary'),
    codePre: el('pre'),
    path: el('div', 'jp-icedtea-run-path')
  };
  header.path.title = 'Run store: reopen it with %icedtea open PATH';
  const line = el('div', 'jp-icedtea-run-line');
  line.append(header.badge, header.id, header.started, header.duration);
  header.code.append(header.codeSummary, header.codePre);
  header.root.append(line, header.code, header.path);
  return header;
}

function createTableHead(): HTMLTableSectionElement {
  const head = el('thead');
  const row = head.appendChild(el('tr'));
  for (const [label, tip] of [
    ['Operator', 'status and name; click to show the partitions'],
    ['In', 'records in'],
    ['Out', 'records out'],
    ['Parts', 'partitions done / running / failed'],
    ['Rate', 'records in per second over the running partitions']
  ]) {
    const th = row.appendChild(el('th', undefined, label));
    if (tip) {
      th.title = tip;
    }
  }
  return head;
}

interface IOperatorRow {
  node: HTMLTableRowElement;
  caret: HTMLSpanElement;
  phase: HTMLSpanElement;
  nameCell: HTMLTableCellElement;
  badge: HTMLSpanElement;
  recordsIn: HTMLTableCellElement;
  recordsOut: HTMLTableCellElement;
  done: HTMLSpanElement;
  running: HTMLSpanElement;
  failed: HTMLSpanElement;
  rate: HTMLTableCellElement;
}

function createOperatorRow(operator: string): IOperatorRow {
  const row: IOperatorRow = {
    node: el('tr', 'jp-icedtea-op-row'),
    caret: el('span', 'jp-icedtea-caret'),
    phase: el('span', 'jp-icedtea-muted'),
    nameCell: el('td', 'jp-icedtea-op-name'),
    badge: badge('pending'),
    recordsIn: el('td', 'jp-icedtea-records-in jp-icedtea-num'),
    recordsOut: el('td', 'jp-icedtea-records-out jp-icedtea-num'),
    done: el('span', 'jp-icedtea-parts-done'),
    running: el('span', 'jp-icedtea-parts-running'),
    failed: el('span', 'jp-icedtea-parts-failed'),
    rate: el('td', 'jp-icedtea-rate jp-icedtea-num')
  };
  row.node.dataset.operator = operator;
  row.node.tabIndex = 0;
  row.node.title = 'Show or hide the partitions of this operator';
  row.badge.classList.add('jp-icedtea-badge-compact');
  row.nameCell.append(row.caret, row.badge, el('span', 'jp-icedtea-op-label', operator), row.phase);
  const parts = el('td', 'jp-icedtea-parts jp-icedtea-num');
  parts.append(row.done, document.createTextNode('/'), row.running, document.createTextNode('/'), row.failed);
  row.node.append(row.nameCell, row.recordsIn, row.recordsOut, parts, row.rate);
  return row;
}

function updateOperatorRow(
  row: IOperatorRow,
  summary: IRunSummary,
  p: IOperatorProgress,
  api: string | undefined,
  expanded: boolean
): void {
  const status = operatorStatus(summary, p);
  row.node.dataset.status = status;
  row.node.setAttribute('aria-expanded', String(expanded));
  setText(row.caret, expanded ? '▾' : '▸');
  // The name of a phase's node usually says its phase already: "count (combine)".
  setText(row.phase, p.phase && !p.operator.includes(`(${p.phase})`) ? ` (${p.phase})` : '');
  row.nameCell.title = `${p.operator}: ${status}` + (api ? ` (${api})` : '');
  setBadge(row.badge, status);
  row.badge.classList.add('jp-icedtea-badge-compact');
  row.badge.title = status;
  setText(row.recordsIn, formatCount(p.records_in));
  setText(row.recordsOut, formatCount(p.records_out));
  setText(row.done, String(p.done));
  setText(row.running, String(p.running));
  setText(row.failed, String(p.failed));
  row.failed.classList.toggle('jp-mod-nonzero', p.failed > 0);
  setText(row.rate, formatRate(p.rate));
}

function partitionRows(expanded: IExpanded): HTMLElement[] {
  const note = (text: string, className = 'jp-icedtea-muted'): HTMLElement => {
    const row = el('tr', 'jp-icedtea-partition-row');
    const td = row.appendChild(el('td', className, text));
    td.colSpan = 5;
    return row;
  };
  if (expanded.error) {
    return [note(expanded.error, 'jp-icedtea-partition-error')];
  }
  if (!expanded.rows) {
    return [note('Loading partitions…')];
  }
  if (!expanded.rows.length) {
    return [note('No partition has run yet.')];
  }
  return expanded.rows.map(r => {
    const row = el('tr', 'jp-icedtea-partition-row');
    row.dataset.status = r.status;
    const name = el('td', 'jp-icedtea-partition-name', `p${r.partition}` + (r.attempt ? ` try ${r.attempt}` : ''));
    name.title =
      `stage ${r.stage}, partition ${r.partition}, attempt ${r.attempt}` +
      (r.task !== null && r.task !== undefined ? `, task ${r.task}` : '');
    const dot = badge(r.status);
    dot.classList.add('jp-icedtea-badge-compact');
    dot.title = r.status;
    name.prepend(dot);
    row.append(
      name,
      el('td', 'jp-icedtea-num', formatCount(r.records_in)),
      el('td', 'jp-icedtea-num', formatCount(r.records_out)),
      el('td', 'jp-icedtea-muted jp-icedtea-num', `stage ${r.stage}`),
      el('td', 'jp-icedtea-num', formatRate(r.rate ?? 0))
    );
    return row;
  });
}

function fillList(section: HTMLElement, title: string, items: string[]): void {
  const list = el('ul');
  list.append(...items.map(text => el('li', undefined, text)));
  section.append(el('h3', 'jp-icedtea-section-title', title), list);
}

/** `failed`, `running`, `done`, `pending` (not started while the run goes on) or `not run`. */
export function operatorStatus(summary: IRunSummary, p: IOperatorProgress): string {
  if (p.failed > 0 || (summary.error && summary.error.operator === p.operator)) {
    return 'failed';
  }
  if (p.running > 0) {
    return 'running';
  }
  if (summary.status === 'running') {
    return p.done > 0 ? 'running' : 'pending';
  }
  return p.done > 0 ? 'done' : 'not run';
}

function alertText(alert: IAlert): string {
  const message = alert.message ?? alert.text ?? alert.title;
  const agent = alert.agent ? `${String(alert.agent)}: ` : '';
  return typeof message === 'string' ? agent + message : agent + JSON.stringify(alert);
}
