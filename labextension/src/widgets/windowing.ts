/** The arithmetic of windowed (virtual) lists: which rows a scrolled viewport shows. */

export interface IWindow {
  /** First row to render (inclusive). */
  start: number;
  /** Row after the last to render (exclusive). */
  end: number;
  /** Pixels above the first rendered row (its top). */
  offset: number;
  /** Height of the whole list in pixels. */
  total: number;
}

/**
 * The rows of a list of `count` rows of `rowHeight` pixels that a viewport of
 * `viewport` pixels scrolled to `scrollTop` shows, plus `overscan` rows on each side.
 */
export function windowRange(
  count: number,
  rowHeight: number,
  scrollTop: number,
  viewport: number,
  overscan = 4
): IWindow {
  const total = Math.max(0, count) * rowHeight;
  if (count <= 0 || rowHeight <= 0) {
    return { start: 0, end: 0, offset: 0, total: 0 };
  }
  const top = Math.min(Math.max(0, scrollTop), Math.max(0, total - viewport));
  const first = Math.floor(top / rowHeight);
  const visible = Math.ceil(Math.max(viewport, rowHeight) / rowHeight) + 1;
  const start = Math.max(0, first - overscan);
  const end = Math.min(count, first + visible + overscan);
  return { start, end, offset: start * rowHeight, total };
}

/** The scrollTop that brings row `index` into view (unchanged if it is visible). */
export function scrollToRow(index: number, rowHeight: number, scrollTop: number, viewport: number): number {
  const top = index * rowHeight;
  if (top < scrollTop) {
    return top;
  }
  if (top + rowHeight > scrollTop + viewport) {
    return top + rowHeight - viewport;
  }
  return scrollTop;
}
