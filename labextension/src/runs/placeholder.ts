import { Widget } from '@lumino/widgets';

import { el } from '../widgets/format';
import type { RunsModel } from './model';

/**
 * A place kept for a view whose capability has not landed yet (the skew chart, the
 * lineage traces): its title and what will fill it. Shown with a selected run.
 */
export class Placeholder extends Widget {
  constructor(
    private readonly _model: RunsModel,
    options: { id: string; title: string; text: string }
  ) {
    super();
    this.addClass('jp-icedtea-Placeholder');
    this.node.dataset.placeholder = options.id;
    this.node.append(
      el('h3', 'jp-icedtea-section-title', options.title),
      el('div', 'jp-icedtea-placeholder', options.text)
    );
    _model.changed.connect(this._update, this);
    this._update();
  }

  dispose(): void {
    if (this.isDisposed) {
      return;
    }
    this._model.changed.disconnect(this._update, this);
    super.dispose();
  }

  private _update(): void {
    this.setHidden(this._model.selected === null);
  }
}
