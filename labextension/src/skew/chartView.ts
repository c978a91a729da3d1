import { Widget } from '@lumino/widgets';
import { changeset } from 'vega';
import { Result, VisualizationSpec } from 'vega-embed';

import { chartFrames } from '../widgets/frameQueue';
import { canBeSeen } from '../widgets/redrawWhenShown';
import { el, setText } from '../widgets/format';
import { barId, cellId, IChartRows, pointId, rowChange } from './liveRows';
import type { SkewModel } from './model';
import { drawSpec, measure } from './drawSpec';
import { ChartKind, chartRenderer, splitData } from './specData';

/** The chart's width (px) where its container has none yet (a collapsed section). */
const DEFAULT_WIDTH = 240;
/** What the y axis and its title take of the width (px). */
const AXES = 70;
/** A live heat map or load over time takes pushed changes at most this often (ms); the
 * bars, at each turn in `chartFrames`. At 500 ms a change waited up to half a second
 * more, past the data's 0.5-s budget; every push (4 a second) gave more frames over
 * 100 ms at 200 partitions x 12 operators (bench/skew_live_ui.py). */
export const HEATMAP_GAP = 250;

/** The load over time's note while its dataset has no points. */
const NO_POINTS_YET = 'No records taken in yet: the lines start with the first progress reports.';

/** Each chart's container class (the browser tests find the charts by it). */
const CHART_CLASS: { [kind in ChartKind]: string } = {
  spec: 'jp-icedtea-skew-chart',
  heatmap: 'jp-icedtea-skew-heatmap',
  timeline: 'jp-icedtea-skew-timeline'
};

/** Each chart's row identity (`liveRows`). */
const ROW_ID: { [kind in ChartKind]: (row: unknown) => string } = {
  spec: barId as (row: unknown) => string,
  heatmap: cellId as (row: unknown) => string,
  timeline: pointId as (row: unknown) => string
};

/** The charts whose pushed rows wait `HEATMAP_GAP` after the last applied. The heat map:
 * thousands of cells. The load over time: each push moves its time axis on, so every
 * drawn point and every line's path is encoded again whatever rows came (not only the
 * changed ones, as with bars), and a line's trend reads as well at every other push. */
const GAPPED: ReadonlySet<ChartKind> = new Set<ChartKind>(['heatmap', 'timeline']);

/**
 * One of the skew report's charts: the Vega-Lite spec the kernel built with Altair
 * (`s.chart()`), drawn with vega-embed; a new report of the same chart swaps its data,
 * and a pushed change (live, while the run records) changes only its rows in the drawn
 * view. A click on a bar selects its partition in the model. The load over time shows
 * the report's `timeline_note` (why it has no lines) under it.
 */
export class SkewChart extends Widget {
  /** `kind`: the partitions' bars (`spec`, a click selects one), the `heatmap` or the
   * load over time (`timeline`). */
  constructor(model: SkewModel, kind: ChartKind = 'spec') {
    super();
    this._model = model;
    this._kind = kind;
    this.addClass('jp-icedtea-SkewChart');
    this._chart = el('div', CHART_CLASS[kind]);
    this._note = el('div', 'jp-icedtea-muted');
    this.node.append(this._chart, this._note);
    model.changed.connect(this._onChanged, this);
    model.chartRows.connect(this._onRows, this);
    this._onChanged();
  }

  dispose(): void {
    if (this.isDisposed) {
      return;
    }
    this._model.changed.disconnect(this._onChanged, this);
    this._model.chartRows.disconnect(this._onRows, this);
    chartFrames.cancel(this);
    chartFrames.cancel(this._rowsJob);
    this._result?.finalize();
    super.dispose();
  }

  protected onResize(msg: Widget.ResizeMessage): void {
    super.onResize(msg);
    const width = this._chart.clientWidth;
    if (width > 0 && Math.abs(width - this._width) > 20 && this._spec !== null) {
      this._scheduleDraw(true);
    }
  }

  protected onAfterShow(): void {
    if (this._stale) {
      // changed while its section was collapsed: drawn once, from the latest report
      this._stale = false;
      this._pending = { remove: new Set(), insert: new Map(), scheduled: this._pending.scheduled };
      this._spec = this._model.report?.[this._kind] ?? null;
      this._showNote();
      this._scheduleDraw(true);
      return;
    }
    this.onResize(Widget.ResizeMessage.UnknownSize);
  }

  private _onChanged(): void {
    if (!canBeSeen(this)) {
      this._stale = true; // no Vega work, and no note, while collapsed
      return;
    }
    this._showNote(); // a pushed change may bring a note and no rows
    const spec = this._model.report?.[this._kind] ?? null;
    if (spec === this._spec) {
      return; // the same chart (a pushed change's rows, if any, are applied already)
    }
    this._spec = spec;
    this._scheduleDraw(false);
  }

  /** The latest spec drawn at its turn in `chartFrames`: anew where `whole`
   * (a resize, shown after changes while collapsed) or its shape changed, else its
   * dataset swapped in the drawn view (new numbers). */
  private _scheduleDraw(whole: boolean): void {
    this._whole = this._whole || whole;
    chartFrames.add(this, () => {
      if (this.isDisposed) {
        return;
      }
      const parts = splitData(this._spec);
      if (!this._whole && this._result !== null && parts !== null && parts.shape === this._shape) {
        this._drawn = null;
        return this._change(view => view.data(this._dataName, parts.values));
      }
      this._whole = false;
      return this._draw(this._spec as VisualizationSpec | null);
    });
  }

  /** A pushed change of this chart's rows: those rows only, in the drawn view (its whole
   * dataset swapped redrew every cell: long frames at 200 partitions x 12 operators);
   * the changes pushed before their turn in `chartFrames` (a frame of their own, not
   * the other charts') go in as one. */
  private _onRows(sender: SkewModel, rows: IChartRows): void {
    if (rows.kind !== this._kind || this._result === null) {
      return; // none drawn yet: the draw under way catches up (`_catchUp`)
    }
    if (!canBeSeen(this)) {
      this._stale = true; // the report's dataset has them: drawn when shown
      return;
    }
    const id = ROW_ID[this._kind];
    rows.remove.forEach(key => this._pending.remove.add(key));
    rows.insert.forEach(row => this._pending.insert.set(id(row), row));
    if (!this._pending.scheduled) {
      this._pending.scheduled = true;
      const wait = GAPPED.has(this._kind) ? this._applied + HEATMAP_GAP - performance.now() : 0;
      const apply = () => chartFrames.add(this._rowsJob, () => this._applyRows(id));
      if (wait > 0) {
        setTimeout(apply, wait);
      } else {
        apply();
      }
    }
  }

  private _applyRows(id: (row: unknown) => string): Promise<void> | void {
    const { remove, insert } = this._pending;
    this._pending = { remove: new Set(), insert: new Map(), scheduled: false };
    this._applied = performance.now();
    if (this._result === null || this.isDisposed) {
      return;
    }
    if (this._renderer === 'svg' && chartRenderer(this._kind, this._spec) === 'canvas') {
      this._scheduleDraw(true); // grown past CANVAS_CELLS
      return;
    }
    return this._change(view => view.change(this._dataName, this._changeOf(view, id, remove, insert)));
  }

  /** The pushed rows as one Vega changeset (`rowChange`), against the drawn view's rows. */
  private _changeOf(
    view: Result['view'],
    id: (row: unknown) => string,
    remove: Set<string>,
    insert: Map<string, unknown>
  ): ReturnType<typeof changeset> {
    if (this._drawn === null) {
      this._drawn = new Map((view.data(this._dataName) as object[]).map(tuple => [id(tuple), tuple]));
    }
    const rows = rowChange(this._drawn, remove, insert);
    const change = changeset();
    rows.modify.forEach(([tuple, field, value]) => change.modify(tuple, field, value));
    return change.remove(rows.remove).insert(rows.insert);
  }

  /** Live updates of the drawn chart, without a new view (a new vega-embed each time took
   * a long task per update at 200 partitions); a failure draws the chart anew. */
  private async _change(update: (view: Result['view']) => Result['view']): Promise<void> {
    const start = performance.now();
    try {
      await update(this._result!.view).runAsync();
      measure(`icedtea-skew-${this._kind}`, start);
      this._chart.dataset.live = String(this._model.report?.live ?? false);
    } catch {
      await this._draw(this._spec as VisualizationSpec | null);
    }
  }

  private async _draw(spec: VisualizationSpec | null): Promise<void> {
    const token = ++this._token;
    if (spec === null) {
      this._result?.finalize();
      this._result = null;
      this._chart.replaceChildren();
      this._chart.dataset.state = 'empty';
      return;
    }
    try {
      // The sidebar's width, not the spec's (made for a notebook cell), less the axes'.
      const width = this._chart.clientWidth || DEFAULT_WIDTH;
      this._width = width;
      const renderer = chartRenderer(this._kind, spec);
      const parts = splitData(spec);
      const options = { renderer, width: Math.max(width - AXES, 120), name: this._kind };
      const drawn = await drawSpec(spec, options, () => token === this._token && !this.isDisposed);
      if (drawn === null) {
        return; // a newer draw began
      }
      const { element, result } = drawn;
      this._chart.replaceChildren(element);
      this._result?.finalize();
      this._result = result;
      this._drawn = null;
      this._renderer = renderer;
      this._chart.dataset.renderer = renderer;
      this._shape = parts?.shape ?? '';
      this._dataName = parts?.name ?? '';
      if (this._kind === 'spec') {
        result.view.addEventListener('click', (event, item) => {
          const partition = (item?.datum as { partition?: unknown } | undefined)?.partition;
          this._model.selectPartition(typeof partition === 'number' ? partition : null);
        });
      }
      this._chart.dataset.state = 'drawn';
      this._chart.dataset.live = String(this._model.report?.live ?? false);
      this._failure = '';
      this._showNote();
      this._catchUp(spec, parts?.values);
    } catch (reason) {
      this._chart.dataset.state = 'failed';
      this._failure = `The chart could not be drawn: ${reason instanceof Error ? reason.message : reason}`;
      this._showNote();
    }
  }

  /** After a draw from `spec` holding `values`: what changed meanwhile (a pushed change
   * or report while vega-embed worked, applied to no view or to the one replaced). */
  private _catchUp(spec: unknown, values: unknown[] | undefined): void {
    if (this._spec !== spec || splitData(this._spec)?.values !== values) {
      this._scheduleDraw(false); // not up to date
    }
  }

  /** The note under the chart: why it could not be drawn, else (the load over time) why
   * it has no lines: the report's `timeline_note`, or no points yet. */
  private _showNote(): void {
    let note = '';
    if (this._kind === 'timeline') {
      const points = splitData(this._model.report?.timeline)?.values.length ?? 0;
      note = this._model.report?.timeline_note || (points === 0 ? NO_POINTS_YET : '');
    }
    setText(this._note, this._failure || note);
  }

  private _model: SkewModel;
  private _kind: ChartKind;
  private _chart: HTMLDivElement;
  private _note: HTMLDivElement;
  /** Why the chart last could not be drawn ("": it was). */
  private _failure = '';
  private _result: Result | null = null;
  /** The spec drawn (the report's own object: a pushed change updates its dataset). */
  private _spec: unknown = null;
  /** Pushed rows not yet in the drawn view (applied at their turn in `chartFrames`). */
  private _pending = { remove: new Set<string>(), insert: new Map<string, unknown>(), scheduled: false };
  /** The drawn spec without its data, and its one dataset's name (`splitData`). */
  private _shape = '';
  private _dataName = '';
  private _width = 0;
  private _token = 0;
  private _renderer: 'svg' | 'canvas' = 'svg';
  /** The key of this chart's pushed rows' job in `chartFrames` (its draws': the chart). */
  private readonly _rowsJob = {};
  /** The next scheduled draw makes a new view (not a swap of its dataset). */
  private _whole = false;
  /** Changes came while the chart could not be seen (drawn anew when shown). */
  private _stale = false;
  /** The drawn view's rows by identity (`barId`, `cellId`, `pointId`), once a change needs them. */
  private _drawn: Map<string, object> | null = null;
  /** When pushed rows were last applied (performance.now(), ms). */
  private _applied = -Infinity;
}
