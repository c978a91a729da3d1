import { Widget } from '@lumino/widgets';

import { el, setChildren } from '../widgets/format';
import type { SkewModel } from './model';

/** The report's advice: each remedy, why, how much the heaviest partition shrinks, the code. */
export class SkewAdvice extends Widget {
  constructor(model: SkewModel) {
    super();
    this._model = model;
    this.addClass('jp-icedtea-SkewAdvice');
    model.changed.connect(this._render, this);
    this._render();
  }

  dispose(): void {
    if (this.isDisposed) {
      return;
    }
    this._model.changed.disconnect(this._render, this);
    super.dispose();
  }

  private _render(): void {
    const report = this._model.report;
    const advice = report && report.skewed.length > 0 ? report.advice : [];
    setChildren(
      this.node,
      advice.map(a => {
        const item = el('details', 'jp-icedtea-skew-remedy');
        item.dataset.remedy = a.remedy;
        const shrink = `${Math.round(a.shrink * 100)}% smaller`;
        item.append(el('summary', undefined, `${a.remedy}: heaviest partition ${shrink}`), el('p', undefined, a.why));
        item.append(el('pre', 'jp-icedtea-skew-code', a.code));
        return item;
      })
    );
  }

  private _model: SkewModel;
}
