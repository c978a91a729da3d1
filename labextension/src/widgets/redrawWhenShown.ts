/** What a Lumino `Widget` tells of its visibility (a widget is one). */
export interface IShowable {
  readonly isAttached: boolean;
  readonly isVisible: boolean;
  readonly parent: { readonly isVisible: boolean } | null;
}

/**
 * A view's redraws, deferred while it cannot be seen: a collapsed sidebar section (or
 * a hidden main-area tab) skips them and marks itself stale, and draws once, from the
 * latest data, when shown. A view not yet in the page draws at once (its first draw).
 * The view calls `request()` where it redrew, and `shown()` from its `onAfterShow`.
 */
export class RedrawWhenShown {
  constructor(
    private readonly _widget: IShowable,
    private readonly _draw: () => void
  ) {}

  /** Whether updates came while hidden and are not drawn yet. */
  get stale(): boolean {
    return this._stale;
  }

  /** Draw now if the view can be seen, else on its next show. */
  request(): void {
    if (!canBeSeen(this._widget)) {
      this._stale = true;
      return;
    }
    this._stale = false;
    this._draw();
  }

  /** The view was shown: draw what came while it was hidden. */
  shown(): void {
    if (this._stale) {
      this.request();
    }
  }

  private _stale = false;
}

/**
 * Not in the page yet, or its container is visible. The container, not the view: a
 * view may hide itself (nothing to show), and must still hear of the change that
 * shows it again.
 */
export function canBeSeen(widget: IShowable): boolean {
  if (!widget.isAttached) {
    return true;
  }
  return widget.parent ? widget.parent.isVisible : widget.isVisible;
}
