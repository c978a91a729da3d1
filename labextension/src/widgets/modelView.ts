import type { ISignal } from '@lumino/signaling';
import { Widget } from '@lumino/widgets';

/** A model a view draws: it says when it changed. */
export interface IChangingModel {
  readonly changed: ISignal<unknown, unknown>;
}

/**
 * A widget that draws one model: `_render` runs when the subclass calls `_follow()` (at
 * the end of its constructor, once its nodes exist) and on every change of the model,
 * until the widget is disposed.
 */
export abstract class ModelView<M extends IChangingModel> extends Widget {
  constructor(model: M, options?: Widget.IOptions) {
    super(options);
    this._model = model;
  }

  dispose(): void {
    if (this.isDisposed) {
      return;
    }
    this._model.changed.disconnect(this._render, this);
    super.dispose();
  }

  /** Draw now, and again on each change of the model. */
  protected _follow(): void {
    this._model.changed.connect(this._render, this);
    this._render();
  }

  protected abstract _render(): void;

  protected readonly _model: M;
}
