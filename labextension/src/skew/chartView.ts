import { Widget } from '@lumino/widgets';
import embed, { Result, VisualizationSpec } from 'vega-embed';

import { el, setText } from '../widgets/format';
import type { SkewModel } from './model';
import { splitData } from './specData';

/** The chart's width (px) where its container has none yet (a collapsed section). */
const DEFAULT_WIDTH = 240;
/** What the y axis and its title take of the width (px). */
const AXES = 70;

/**
 * The skew report's chart: the Vega-Lite spec the kernel built with Altair
 * (`s.chart()`), drawn with vega-embed, drawn again when the report changes (live,
 * while the run records). A click on a bar selects its partition in the model.
 */
export class SkewChart extends Widget {
  /** `kind`: the partitions' bars (`spec`, a click selects one) or the `heatmap`. */
  constructor(model: SkewModel, kind: 'spec' | 'heatmap' = 'spec') {
    super();
    this._model = model;
    this._kind = kind;
    this.addClass('jp-icedtea-SkewChart');
    this._chart = el('div', kind === 'spec' ? 'jp-icedtea-skew-chart' : 'jp-icedtea-skew-heatmap');
    this._note = el('div', 'jp-icedtea-muted');
    this.node.append(this._chart, this._note);
    model.changed.connect(this._onChanged, this);
    this._onChanged();
  }

  dispose(): void {
    if (this.isDisposed) {
      return;
    }
    this._model.changed.disconnect(this._onChanged, this);
    this._result?.finalize();
    super.dispose();
  }

  protected onResize(msg: Widget.ResizeMessage): void {
    super.onResize(msg);
    const width = this._chart.clientWidth;
    if (width > 0 && Math.abs(width - this._width) > 20 && this._drawn) {
      void this._draw(JSON.parse(this._drawn) as VisualizationSpec | null);
    }
  }

  protected onAfterShow(): void {
    this.onResize(Widget.ResizeMessage.UnknownSize);
  }

  private _onChanged(): void {
    const spec = this._model.report?.[this._kind] ?? null;
    const drawn = JSON.stringify(spec);
    if (drawn === this._drawn) {
      return;
    }
    this._drawn = drawn;
    const parts = splitData(spec);
    if (this._result !== null && parts !== null && parts.shape === this._shape) {
      void this._swapData(parts.values); // the same chart, new numbers: no new view
      return;
    }
    void this._draw(spec as VisualizationSpec | null);
  }

  /** Live updates of an unchanged chart: its dataset replaced in the drawn view (a new
   * vega-embed each time took a long task per update at 200 partitions). */
  private async _swapData(values: unknown[]): Promise<void> {
    const token = ++this._token;
    try {
      await this._result!.view.data(this._dataName, values).runAsync();
      if (token === this._token) {
        this._chart.dataset.live = String(this._model.report?.live ?? false);
      }
    } catch {
      await this._draw(JSON.parse(this._drawn) as VisualizationSpec | null);
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
      const options = { width: Math.max(width - AXES, 120) };
      const result = await embed(this._chart, spec, { actions: false, renderer: 'svg', ...options });
      if (token !== this._token || this.isDisposed) {
        result.finalize();
        return;
      }
      this._result?.finalize();
      this._result = result;
      const parts = splitData(spec);
      this._shape = parts?.shape ?? '';
      this._dataName = parts?.name ?? '';
      result.view.addEventListener('click', (event, item) => {
        if (this._kind !== 'spec') {
          return;
        }
        const partition = (item?.datum as { partition?: unknown } | undefined)?.partition;
        this._model.selectPartition(typeof partition === 'number' ? partition : null);
      });
      this._chart.dataset.state = 'drawn';
      this._chart.dataset.live = String(this._model.report?.live ?? false);
      setText(this._note, '');
    } catch (reason) {
      this._chart.dataset.state = 'failed';
      setText(this._note, `The chart could not be drawn: ${reason instanceof Error ? reason.message : reason}`);
    }
  }

  private _model: SkewModel;
  private _kind: 'spec' | 'heatmap';
  private _chart: HTMLDivElement;
  private _note: HTMLDivElement;
  private _result: Result | null = null;
  private _drawn = '';
  /** The drawn spec without its data, and its one dataset's name (`splitData`). */
  private _shape = '';
  private _dataName = '';
  private _width = 0;
  private _token = 0;
}
