import type { Message } from '@lumino/messaging';
import { Widget } from '@lumino/widgets';
import embed, { Result, VisualizationSpec } from 'vega-embed';

import type { ISummaryChange, ISummaryComparison } from '../comm/protocol';
import { RedrawWhenShown } from '../widgets/redrawWhenShown';
import { el, setChildren, setText } from '../widgets/format';
import type { SummariesModel } from './model';

/** The chart's width (px) where its container has none yet (a collapsed section). */
const DEFAULT_WIDTH = 240;
const AXES = 70;

function valueText(value: unknown): string {
  if (typeof value === 'number') {
    return Number.isInteger(value) ? String(value) : value.toPrecision(4);
  }
  return value === null || value === undefined ? '' : String(value);
}

function changesTable(changes: ISummaryChange[]): HTMLTableElement {
  const table = el('table', 'jp-icedtea-summary-changes');
  table.setAttribute('aria-label', 'What changed between the two runs');
  const head = el('tr');
  head.append(...['operator', 'field', 'change', 'before', 'after', 'statistic'].map(c => el('th', undefined, c)));
  const thead = el('thead');
  thead.append(head);
  const body = el('tbody');
  body.append(
    ...changes.map(change => {
      const row = el('tr');
      row.dataset.field = change.field;
      row.dataset.change = change.change;
      row.append(
        ...[change.operator, change.field, change.change, change.before, change.after, change.statistic].map(v =>
          el('td', undefined, valueText(v))
        )
      );
      return row;
    })
  );
  table.append(thead, body);
  return table;
}

/**
 * The selected run against an earlier run of its cell: a pick of the earlier run, the
 * table of changes (`run.summary_diff`) and an Altair chart of each shifted field.
 */
export class SummariesView extends Widget {
  constructor(private readonly _model: SummariesModel) {
    super();
    this.addClass('jp-icedtea-SummariesView');
    this._picker = el('select', 'jp-icedtea-summary-other');
    this._picker.setAttribute('aria-label', 'Compare with the run');
    this._picker.addEventListener('change', () => void this._model.compare(this._picker.value));
    this._note = el('div', 'jp-icedtea-muted');
    this._table = el('div');
    this._charts = el('div', 'jp-icedtea-summary-charts');
    this.node.append(this._picker, this._note, this._table, this._charts);
    _model.changed.connect(this._onChanged, this);
    this._render();
  }

  dispose(): void {
    this._model.dispose();
    this._results.forEach(r => r.finalize());
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
    const comparison = this._model.comparison;
    setText(this._note, this._noteText(comparison));
    this._picker.hidden = !comparison || comparison.earlier.length === 0;
    if (comparison) {
      setChildren(
        this._picker,
        comparison.earlier.map(e => {
          const option = el('option', undefined, `${e.version} (${e.run})`);
          option.value = e.run;
          option.selected = e.run === comparison.other;
          return option;
        })
      );
    }
    setChildren(this._table, comparison && comparison.changes.length ? [changesTable(comparison.changes)] : []);
    void this._drawCharts(comparison);
  }

  private _noteText(comparison: ISummaryComparison | null): string {
    if (this._model.error) {
      return this._model.error;
    }
    if (this._model.loading) {
      return 'Comparing…';
    }
    if (!comparison) {
      return 'Select a finished run recorded with --agent summaries.';
    }
    if (comparison.other === null) {
      return comparison.note ?? 'No earlier run of this cell recorded summaries to compare with.';
    }
    return comparison.changes.length === 0
      ? `Nothing changed since ${comparison.other}.`
      : `Against ${comparison.other}: ${comparison.changes.length} change(s).`;
  }

  private async _drawCharts(comparison: ISummaryComparison | null): Promise<void> {
    const drawn = JSON.stringify(comparison?.charts ?? []);
    if (drawn === this._drawn) {
      return;
    }
    this._drawn = drawn;
    this._results.forEach(r => r.finalize());
    this._results = [];
    const holders = (comparison?.charts ?? []).map(chart => {
      const holder = el('div', 'jp-icedtea-summary-chart');
      holder.dataset.field = chart.field;
      holder.dataset.operator = chart.operator;
      return holder;
    });
    setChildren(this._charts, holders);
    const width = Math.max((this._charts.clientWidth || DEFAULT_WIDTH) - AXES, 120);
    for (const [i, chart] of (comparison?.charts ?? []).entries()) {
      try {
        const result = await embed(holders[i], chart.spec as VisualizationSpec, {
          actions: false,
          renderer: 'svg',
          width
        });
        this._results.push(result);
        holders[i].dataset.state = 'drawn';
      } catch (reason) {
        holders[i].dataset.state = 'failed';
        setText(holders[i], `The chart could not be drawn: ${reason instanceof Error ? reason.message : reason}`);
      }
    }
  }

  private _picker: HTMLSelectElement;
  private _note: HTMLDivElement;
  private _table: HTMLDivElement;
  private _charts: HTMLDivElement;
  private _results: Result[] = [];
  private _drawn = '';

  private readonly _redraw = new RedrawWhenShown(this, () => this._render());
}
