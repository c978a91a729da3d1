import type { ISignal } from '@lumino/signaling';
import { Widget } from '@lumino/widgets';
import type { Message } from '@lumino/messaging';

import { RedrawWhenShown } from './redrawWhenShown';

/** A model a view draws: it says when it changed. */
export interface IChangingModel {
  readonly changed: ISignal<unknown, unknown>;
}

/**
 * A widget that draws one model: `_render` runs when the subclass calls `_follow()` (at
 * the end of its constructor, once its nodes exist) and on every change of the model,
 * until the widget is disposed. Changes that come while the view cannot be seen (its
 * sidebar section collapsed) are drawn once, from the latest model, when it is shown.
 * A subclass that overrides `onAfterShow` calls `super.onAfterShow(msg)`.
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
    this._model.changed.disconnect(this._onChanged, this);
    super.dispose();
  }

  /** Whether model changes came while hidden and are not drawn yet. */
  get stale(): boolean {
    return this._redraw.stale;
  }

  /** Draw now, and again on each change of the model (once shown, if hidden). */
  protected _follow(): void {
    this._model.changed.connect(this._onChanged, this);
    this._render();
  }

  protected onAfterShow(msg: Message): void {
    super.onAfterShow(msg);
    this._redraw.shown();
  }

  protected abstract _render(): void;

  private _onChanged(): void {
    this._redraw.request();
  }

  protected readonly _model: M;
  private readonly _redraw = new RedrawWhenShown(this, () => this._render());
}
