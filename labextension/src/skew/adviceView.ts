import { el, setText, syncChildren } from '../widgets/format';
import { ModelView } from '../widgets/modelView';
import type { ISkewAdvice } from '../comm/protocol';
import type { SkewModel } from './model';

/** The report's advice: each remedy, why, how much the heaviest partition shrinks, the
 * code. Changed in place (`syncChildren`): a remedy the user opened stays open while
 * the run's pushes come in. */
export class SkewAdvice extends ModelView<SkewModel> {
  constructor(model: SkewModel) {
    super(model);
    this.addClass('jp-icedtea-SkewAdvice');
    this._follow();
  }

  protected _render(): void {
    const report = this._model.report;
    const advice = report && report.skewed.length > 0 ? report.advice : [];
    syncChildren(this.node, advice, makeRemedy, fillRemedy);
  }
}

function makeRemedy(): HTMLDetailsElement {
  const item = el('details', 'jp-icedtea-skew-remedy');
  item.append(el('summary'), el('p'), el('pre', 'jp-icedtea-skew-code'));
  return item;
}

function fillRemedy(item: HTMLDetailsElement, advice: ISkewAdvice): void {
  if (item.dataset.remedy !== advice.remedy) {
    item.open = false; // another remedy in its place: it opens as the user chooses
    item.dataset.remedy = advice.remedy;
  }
  const [summary, why, code] = Array.from(item.children);
  setText(summary, `${advice.remedy}: heaviest partition ${Math.round(advice.shrink * 100)}% smaller`);
  setText(why, advice.why);
  setText(code, advice.code);
}
