import { el } from './format';
import { scrollToRow, windowRange } from './windowing';

/**
 * A scrolling list of fixed-height rows that keeps in the DOM only the rows in view
 * (and a few more): thousands of rows scroll without freezing the page. Rows are
 * made by `create` once per slot and filled by `update` with the item they show.
 */
export class VirtualList<T> {
  constructor(options: VirtualList.IOptions<T>) {
    this._options = options;
    this.node = el('div', `jp-icedtea-vlist ${options.className ?? ''}`.trim());
    this.node.tabIndex = -1;
    this.node.setAttribute('role', options.role ?? 'list');
    if (options.label) {
      this.node.setAttribute('aria-label', options.label);
    }
    this._spacer = el('div', 'jp-icedtea-vlist-spacer');
    this._rows = el('div', 'jp-icedtea-vlist-rows');
    this._spacer.append(this._rows);
    this.node.append(this._spacer);
    this.node.addEventListener('scroll', this._onScroll, { passive: true });
  }

  /** The scrolling element. */
  readonly node: HTMLDivElement;

  get items(): readonly T[] {
    return this._items;
  }

  /** How many rows are in the DOM now (for tests and the benchmark). */
  get rendered(): number {
    return this._rows.childElementCount;
  }

  /** Show these items (rows in view are refilled at once). */
  setItems(items: readonly T[]): void {
    this._items = items;
    this.render();
  }

  /** Refill the rows in view (after a change of what `update` reads). */
  render(): void {
    const { rowHeight, maxHeight } = this._options;
    const viewport = this.node.clientHeight || maxHeight;
    const w = windowRange(this._items.length, rowHeight, this.node.scrollTop, viewport, this._options.overscan ?? 6);
    this._spacer.style.height = `${w.total}px`;
    // An explicit height: the list is laid out alone (`contain: strict`), whatever scrolls.
    const height = `${Math.min(w.total, maxHeight) + this._border()}px`;
    if (this.node.style.height !== height) {
      this.node.style.height = height;
    }
    this._rows.style.transform = `translateY(${w.offset}px)`;
    const needed = w.end - w.start;
    while (this._slots.length < needed) {
      const slot = this._options.create();
      slot.style.height = `${rowHeight}px`;
      this._slots.push(slot);
    }
    for (let i = 0; i < needed; i++) {
      const slot = this._slots[i];
      const index = w.start + i;
      slot.dataset.row = String(index);
      this._options.update(slot, this._items[index], index);
      if (this._rows.children[i] !== slot) {
        this._rows.insertBefore(slot, this._rows.children[i] ?? null);
      }
    }
    while (this._rows.childElementCount > needed) {
      this._rows.lastElementChild!.remove();
    }
  }

  /** Vertical border of the scrolling element (read once it is in the page). */
  private _border(): number {
    if (this._borderPx === null && this.node.isConnected) {
      const style = getComputedStyle(this.node);
      this._borderPx = (parseFloat(style.borderTopWidth) || 0) + (parseFloat(style.borderBottomWidth) || 0);
    }
    return this._borderPx ?? 0;
  }

  /** Scroll so that row `index` is in view. */
  reveal(index: number): void {
    const { rowHeight, maxHeight } = this._options;
    const viewport = this.node.clientHeight || maxHeight;
    const top = scrollToRow(index, rowHeight, this.node.scrollTop, viewport);
    if (top !== this.node.scrollTop) {
      this.node.scrollTop = top;
      this.render();
    }
  }

  dispose(): void {
    this.node.removeEventListener('scroll', this._onScroll);
    if (this._frame !== null) {
      cancelAnimationFrame(this._frame);
    }
  }

  private _onScroll = (): void => {
    if (this._frame === null) {
      this._frame = requestAnimationFrame(() => {
        this._frame = null;
        this.render();
      });
    }
  };

  private _options: VirtualList.IOptions<T>;
  private _items: readonly T[] = [];
  private _slots: HTMLElement[] = [];
  private _spacer: HTMLDivElement;
  private _rows: HTMLDivElement;
  private _frame: number | null = null;
  private _borderPx: number | null = null;
}

export namespace VirtualList {
  export interface IOptions<T> {
    /** Pixels of each row (fixed). */
    rowHeight: number;
    /** Height of the scrolling viewport when the list is long. */
    maxHeight: number;
    /** A new empty row element. */
    create: () => HTMLElement;
    /** Fill a row element with an item. */
    update: (row: HTMLElement, item: T, index: number) => void;
    className?: string;
    role?: string;
    label?: string;
    /** Rows rendered beyond each edge of the viewport (default 6). */
    overscan?: number;
  }
}
