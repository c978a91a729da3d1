import { el, setChildren } from '../widgets/format';
import { ModelView } from '../widgets/modelView';
import type { SkewModel } from './model';

/** The report's advice: each remedy, why, how much the heaviest partition shrinks, the code. */
export class SkewAdvice extends ModelView<SkewModel> {
  constructor(model: SkewModel) {
    super(model);
    this.addClass('jp-icedtea-SkewAdvice');
    this._follow();
  }

  protected _render(): void {
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
}
