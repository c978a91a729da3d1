import type { Message } from '@lumino/messaging';
import { Panel, Widget } from '@lumino/widgets';

import { RedrawWhenShown } from '../widgets/redrawWhenShown';
import { el, formatCount, setChildren, setText } from '../widgets/format';
import { SkewAdvice } from './adviceView';
import { SkewChart } from './chartView';
import { SkewKeys } from './keysView';
import type { SkewModel } from './model';

/**
 * The Skew section: which operator (a picker), the load per partition stacked by heavy
 * key (`SkewChart`, live while the run records), the load over time (the records the
 * partitions have taken in so far, also live), the selected partition's keys and flags
 * (`SkewKeys`), the advice (`SkewAdvice`) and the heat map of every operator's
 * partitions: `run.skew(op)` in the sidebar.
 */
export class SkewView extends Panel {
  constructor(model: SkewModel) {
    super();
    this._model = model;
    this.addClass('jp-icedtea-SkewView');
    const header = new Widget({ node: el('div', 'jp-icedtea-skew-header') });
    this._picker = el('select', 'jp-icedtea-skew-operator');
    this._picker.setAttribute('aria-label', 'Operator');
    this._picker.addEventListener('change', () => void model.setOperator(this._picker.value));
    this._summary = el('span', 'jp-icedtea-muted');
    this._problem = el('div', 'jp-icedtea-problem'); // a run's failure is .jp-icedtea-error
    this._problem.setAttribute('role', 'alert');
    header.node.append(this._picker, this._summary, this._problem);
    this.addWidget(header);
    this.addWidget(new SkewChart(model));
    this.addWidget(new SkewChart(model, 'timeline'));
    this.addWidget(new SkewKeys(model));
    this.addWidget(new SkewAdvice(model));
    this.addWidget(new SkewChart(model, 'heatmap'));
    model.changed.connect(this._onChanged, this);
    this._render();
  }

  dispose(): void {
    if (this.isDisposed) {
      return;
    }
    this._model.changed.disconnect(this._onChanged, this);
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
    const report = this._model.report;
    const options = (report?.operators ?? []).map(name => {
      const option = el('option', undefined, name);
      option.value = name;
      return option;
    });
    setChildren(this._picker, options);
    this._picker.value = report?.operator ?? '';
    this._picker.hidden = options.length === 0;
    this.node.dataset.live = String(report?.live ?? false);
    const flagged = new Set(report?.skewed.map(f => f.partition) ?? []);
    setText(
      this._summary,
      report
        ? `${report.live ? 'live: ' : ''}${formatCount(report.partitions.length)} partitions by ${report.load.replace('_', ' ')}, ` +
            (flagged.size ? `skewed: ${[...flagged].join(', ')}` : 'none skewed')
        : ''
    );
    setText(this._problem, this._model.error ?? '');
    this._problem.hidden = !this._model.error;
  }

  private readonly _redraw = new RedrawWhenShown(this, () => this._render());
  private _model: SkewModel;
  private _picker: HTMLSelectElement;
  private _summary: HTMLSpanElement;
  private _problem: HTMLDivElement;
}
