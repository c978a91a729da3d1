import { el, formatCount } from './format';

/**
 * "Previous · 21–40 of 1,234 · Next" under a paged list: `go(start)` asks for another
 * page. Empty when everything fits on one page.
 */
export function pager(page: { total: number; start: number }, size: number, go: (start: number) => void): HTMLElement {
  const node = el('div', 'jp-icedtea-pager');
  if (page.total <= size && page.start === 0) {
    return node;
  }
  const button = (label: string, action: string, start: number, enabled: boolean) => {
    const b = el('button', 'jp-icedtea-button jp-icedtea-pager-button', label);
    b.type = 'button';
    b.dataset.action = action;
    b.disabled = !enabled;
    b.addEventListener('click', () => go(start));
    return b;
  };
  const last = Math.min(page.start + size, page.total);
  const where = el('span', 'jp-icedtea-pager-range jp-icedtea-muted');
  where.textContent = `${formatCount(page.start + 1)}–${formatCount(last)} of ${formatCount(page.total)}`;
  node.append(
    button('‹ Previous', 'previous', Math.max(page.start - size, 0), page.start > 0),
    where,
    button('Next ›', 'next', page.start + size, last < page.total)
  );
  return node;
}
