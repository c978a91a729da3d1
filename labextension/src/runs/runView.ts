import { Widget } from '@lumino/widgets';

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
import { OperatorsTable } from './operatorsTable';
import { RunsList } from './runsList';
import { RedrawWhenShown } from '../widgets/redrawWhenShown';
import { errorTitle, shortPath } from './texts';
import type { IAlert, IRunError, IRunSummary } from '../comm/protocol';
import type { DebugModel } from '../timetravel/debugModel';

/**
 * The selected run: its header (status, start, duration, cell, store), which also picks
 * another run ("3 runs ▾" opens the runs list under it), the error that failed it, its
 * warnings, its Python operators (`OperatorsTable`) and the agents' alerts. The same
 * view fills the sidebar's Run section and, wider, the main area. A failed run's card
 * has a "Debug this failure" button (`dbg.jump_to_failure()`, with `debug`).
 */
export class RunView extends Widget {
  constructor(model: RunsModel, debug: DebugModel | null = null) {
    super();
    this._model = model;
    this._debug = debug;
    this.addClass('jp-icedtea-RunView');
    this._header = createHeader();
    this._loading = el('div', 'jp-icedtea-loading', 'Loading the run…');
    this._empty = el('div', 'jp-icedtea-muted', 'No run shown: the notebook followed has none yet.');
    this._error = el('div', 'jp-icedtea-error');
    this._error.setAttribute('role', 'alert');
    this._warnings = el('div', 'jp-icedtea-warnings');
    this._alerts = el('div', 'jp-icedtea-alerts');
    this._operators = new OperatorsTable(model);
    this._runs = new RunsList(model);
    this._runs.onPicked = () => this._setPicking(false);
    this._header.toggle.addEventListener('click', () => this._setPicking(!this._picking));
    this._redraw = new RedrawWhenShown(this, () => this._refresh());
    model.changed.connect(this._onChanged, this);
    this._onChanged();
  }

  dispose(): void {
    if (this.isDisposed) {
      return;
    }
    this._model.changed.disconnect(this._onChanged, this);
    this._operators.reset();
    super.dispose();
  }

  /** Bring the view up to date with the selected run, in place. */
  render(): void {
    const summary = this._model.selected;
    const runs = this._model.runs.length;
    this._runs.render();
    if (runs < 2) {
      this._picking = false;
    }
    // In the page either way (hidden when closed): the runs stay findable by tests and tools.
    this._runs.node.hidden = !this._picking;
    const picker = [this._runs.node];
    if (!summary) {
      const loading = this._model.selectedId !== null;
      setChildren(this.node, [loading ? this._loading : this._empty, ...picker]);
      return;
    }
    this._renderHeader(summary, runs);
    const children: HTMLElement[] = [this._header.root, ...picker];
    const errorKey = summary.error ? { ...summary.error, status: summary.status } : null;
    if (this._renderKeyed(this._error, errorKey, () => this._fillError(summary.error as IRunError))) {
      children.push(this._error);
    }
    if (
      this._renderKeyed(this._warnings, summary.warnings.length ? summary.warnings : null, w =>
        fillList(this._warnings, 'Warnings', w)
      )
    ) {
      children.push(this._warnings);
    }
    children.push(this._operators.node);
    if (
      this._renderKeyed(this._alerts, summary.alerts.length ? summary.alerts : null, a =>
        fillList(this._alerts, 'Alerts', a.map(alertText))
      )
    ) {
      children.push(this._alerts);
    }
    setChildren(this.node, children);
    this._operators.render(summary);
  }

  protected onAfterShow(): void {
    this._redraw.shown();
  }

  private _onChanged(): void {
    const runId = this._model.selectedId;
    if (runId !== this._runId) {
      this._runId = runId;
      this._operators.reset();
      this._header.code.open = false;
    }
    this._redraw.request(); // collapsed: on the next expand
  }

  /** Refetch the expanded operators' partitions as the status asks, and render. */
  private _refresh(): void {
    const summary = this._model.selected;
    if (summary && summary.status === 'running') {
      this._operators.refreshPartitions(false);
    } else if (summary && summary.status !== this._lastStatus) {
      this._operators.refreshPartitions(true); // the final counts
    }
    this._lastStatus = summary?.status ?? null;
    this.render();
  }

  private _setPicking(picking: boolean): void {
    this._picking = picking;
    this.render();
    if (picking) {
      this._runs.node.querySelector<HTMLElement>('.jp-mod-selected')?.focus();
    }
  }

  private _renderHeader(summary: IRunSummary, runs: number): void {
    const h = this._header;
    setBadge(h.badge, summary.status);
    setText(h.started, formatTime(summary.started));
    h.started.title = 'started';
    setText(h.duration, formatDuration(runDuration(summary)));
    h.duration.title = summary.status === 'running' ? 'running for' : 'lasted';
    const operators = summary.dag.operators.filter(op => op.kind === 'python').length;
    h.line.title = `Run ${summary.id}: ${summary.status}, ${plural(operators, 'Python operator')}`;
    h.toggle.hidden = runs < 2;
    setText(h.toggle, `${plural(runs, 'run')} ${this._picking ? '▴' : '▾'}`);
    h.toggle.setAttribute('aria-expanded', String(this._picking));
    h.toggle.title = this._picking ? 'Hide the other runs' : 'Show the runs of this kernel, to pick another';
    setText(h.codeSummary, summary.cell.split('\n').find(l => l.trim()) ?? '(empty cell)');
    setText(h.codePre, summary.cell);
    setText(h.path, shortPath(summary.path));
    h.path.title = `Run ${summary.id}, stored in ${summary.path}: reopen it with %icedtea open PATH`;
    h.root.dataset.runId = summary.id;
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
    box.appendChild(el('div', 'jp-icedtea-error-title', errorTitle(error, this._model.selected?.status ?? 'failed')));
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
    const debug = this._debug;
    const failed = this._model.selected?.status === 'failed'; // not a run whose retry succeeded
    if (debug && failed && error.operator !== null && error.operator !== undefined) {
      const button = el('button', 'jp-icedtea-button jp-icedtea-debug-failure', 'Debug this failure');
      button.type = 'button';
      button.title =
        "Replay θ's chain on the failing partition up to just before the culprit record " +
        '(dbg.jump_to_failure()); Over then reproduces the exception';
      button.addEventListener('click', () => void debug.jumpToFailure());
      box.appendChild(button);
    }
  }

  private _model: RunsModel;
  private _debug: DebugModel | null;
  private _redraw: RedrawWhenShown;
  private _runId: string | null = null;
  private _lastStatus: string | null = null;
  private _operators: OperatorsTable;
  private _runs: RunsList;
  private _picking = false;
  private _header: IHeader;
  private _loading: HTMLElement;
  private _empty: HTMLElement;
  private _error: HTMLElement;
  private _warnings: HTMLElement;
  private _alerts: HTMLElement;
}

interface IHeader {
  root: HTMLElement;
  badge: HTMLSpanElement;
  started: HTMLSpanElement;
  duration: HTMLSpanElement;
  line: HTMLElement;
  toggle: HTMLButtonElement;
  code: HTMLDetailsElement;
  codeSummary: HTMLElement;
  codePre: HTMLPreElement;
  path: HTMLDivElement;
}

function createHeader(): IHeader {
  const header: IHeader = {
    root: el('div', 'jp-icedtea-run-header'),
    badge: badge('running'),
    started: el('span', 'jp-icedtea-run-started'),
    duration: el('span', 'jp-icedtea-run-duration'),
    line: el('div', 'jp-icedtea-run-line'),
    toggle: el('button', 'jp-icedtea-link jp-icedtea-runs-toggle'),
    code: el('details', 'jp-icedtea-run-code'),
    codeSummary: el('summary'),
    codePre: el('pre'),
    path: el('div', 'jp-icedtea-run-path')
  };
  header.toggle.type = 'button';
  header.line.append(header.badge, header.started, header.duration, header.toggle);
  // The cell's first line; open, the whole cell and where the run is stored.
  header.code.append(header.codeSummary, header.codePre, header.path);
  header.root.append(header.line, header.code);
  return header;
}

function fillList(section: HTMLElement, title: string, items: string[]): void {
  const list = el('ul');
  list.append(...items.map(text => el('li', undefined, text)));
  section.append(el('h3', 'jp-icedtea-section-title', title), list);
}

function alertText(alert: IAlert): string {
  const message = alert.message ?? alert.text ?? alert.title;
  const agent = alert.agent ? `${String(alert.agent)}: ` : '';
  return typeof message === 'string' ? agent + message : agent + JSON.stringify(alert);
}
