/** Small text formatters shared by the views. */

/** `"1.2 s"`, `"3 min 04 s"`, `"1 h 02 min"`. */
export function formatDuration(seconds: number | null | undefined): string {
  if (seconds === null || seconds === undefined || !isFinite(seconds) || seconds < 0) {
    return '–';
  }
  if (seconds < 10) {
    return `${seconds.toFixed(1)} s`;
  }
  if (seconds < 60) {
    return `${Math.round(seconds)} s`;
  }
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) {
    return `${minutes} min ${String(Math.round(seconds % 60)).padStart(2, '0')} s`;
  }
  return `${Math.floor(minutes / 60)} h ${String(minutes % 60).padStart(2, '0')} min`;
}

/** Local wall-clock time of an epoch in seconds: `"14:03:27"`. */
export function formatTime(epochSeconds: number | null | undefined): string {
  if (epochSeconds === null || epochSeconds === undefined || !isFinite(epochSeconds)) {
    return '–';
  }
  const date = new Date(epochSeconds * 1000);
  return [date.getHours(), date.getMinutes(), date.getSeconds()].map(n => String(n).padStart(2, '0')).join(':');
}

/** `"1,234,567"`; `"–"` for a missing count. */
export function formatCount(value: number | null | undefined): string {
  if (value === null || value === undefined || !isFinite(value)) {
    return '–';
  }
  return Math.round(value).toLocaleString('en-US');
}

/** Counts for narrow columns: `"999,999"`, then `"1.23M"`, `"45.6M"`, `"1.2B"` (the exact count goes in a tooltip). */
export function formatShortCount(value: number | null | undefined): string {
  if (value === null || value === undefined || !isFinite(value)) {
    return '–';
  }
  const abs = Math.abs(value);
  if (abs < 1e6) {
    return formatCount(value);
  }
  const [scaled, unit] = abs < 1e9 ? [value / 1e6, 'M'] : [value / 1e9, 'B'];
  const digits = Math.abs(scaled) < 10 ? 2 : Math.abs(scaled) < 100 ? 1 : 0;
  return `${scaled.toFixed(digits)}${unit}`;
}

/** `"1 interaction"`, `"2 interactions"`, `"1,077 interactions"`; `plural` for irregular nouns. */
export function plural(count: number, singular: string, pluralForm = `${singular}s`): string {
  return `${formatCount(count)} ${count === 1 ? singular : pluralForm}`;
}

/** The verb that goes with `count` things: `"waits"` for one, `"wait"` for more. */
export function verb(count: number, singular: string, pluralForm: string): string {
  return count === 1 ? singular : pluralForm;
}

/** Records per second: `"12.3k/s"`, `"130k/s"` (at most 6 characters); empty when nothing runs. */
export function formatRate(value: number | null | undefined): string {
  if (!value || !isFinite(value) || value <= 0) {
    return '';
  }
  if (value >= 1e6) {
    return `${(value / 1e6).toFixed(value >= 1e8 ? 0 : 1)}M/s`;
  }
  if (value >= 1e3) {
    return `${(value / 1e3).toFixed(value >= 1e5 ? 0 : 1)}k/s`;
  }
  return `${value.toFixed(value < 10 ? 1 : 0)}/s`;
}

/** Seconds a run has lasted: live for a running run, else as reported. */
export function runDuration(run: { status: string; started: number; duration: number }): number {
  if (run.status === 'running') {
    return Math.max(run.duration, Date.now() / 1000 - run.started);
  }
  return run.duration;
}

/** A status badge element: `<span class="jp-icedtea-badge jp-icedtea-badge-finished">`. */
export function badge(status: string): HTMLSpanElement {
  const span = document.createElement('span');
  setBadge(span, status);
  return span;
}

/** Show another status on a badge made by `badge`. */
export function setBadge(span: HTMLElement, status: string): void {
  if (span.dataset.status === status) {
    return;
  }
  span.className = `jp-icedtea-badge jp-icedtea-badge-${status.replace(/[^a-z-]/gi, '')}`;
  span.dataset.status = status;
  span.textContent = status;
}

/** Set a node's text only when it changed (the views update in place, several times a second). */
export function setText(node: Node, text: string): void {
  if (node.textContent !== text) {
    node.textContent = text;
  }
}

/** Put `children` in `parent`, in that order, moving nodes only when the order differs. */
export function setChildren(parent: HTMLElement, children: Node[]): void {
  const current = parent.childNodes;
  if (current.length === children.length && children.every((child, i) => current[i] === child)) {
    return;
  }
  parent.replaceChildren(...children);
}

/** Make `parent`'s element children show `items`, reusing those it has: `fill` sets an
 * element's content (only what changed: `setText`, `setData`), `make` makes the missing
 * ones, and children beyond the items go. A list re-rendered a few times a second while
 * a run records then changes only its changed text, not new elements each time (each
 * new set cost the section's style and layout again). */
export function syncChildren<T, E extends HTMLElement>(
  parent: HTMLElement,
  items: readonly T[],
  make: () => E,
  fill: (element: E, item: T) => void
): void {
  while (parent.children.length > items.length) {
    parent.lastElementChild!.remove();
  }
  items.forEach((item, i) => {
    let element = parent.children[i] as E | undefined;
    if (element === undefined) {
      element = make();
      parent.append(element);
    }
    fill(element, item);
  });
}

/** Set a `data-` attribute only when it changed. */
export function setData(node: HTMLElement, name: string, value: string): void {
  if (node.dataset[name] !== value) {
    node.dataset[name] = value;
  }
}

/** `document.createElement` with a class and optional text. */
export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  className?: string,
  text?: string
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (className) {
    node.className = className;
  }
  if (text !== undefined) {
    node.textContent = text;
  }
  return node;
}
