import { el } from '../widgets/format';
import type { IChanged, IPageResult, Tagged } from '../comm/protocol';
import { describe, IDescribed, IEntry, keyId, pyRepr } from '../comm/tagged';

/** Children shown per page of an expanded container. */
export const PAGE_SIZE = 50;

/** What the tree keeps across renders (one per view): expanded paths, pages shown, fetched pages. */
export class TreeState {
  readonly expanded = new Set<string>();
  /** Path -> number of children shown. */
  readonly shown = new Map<string, number>();
  /** Path -> a page fetched with `run.page` (summarised variables). */
  readonly pages = new Map<string, IPageResult | string>();

  toggle(path: string): void {
    if (!this.expanded.delete(path)) {
      this.expanded.add(path);
    }
  }
}

export interface IStateTreeOptions {
  /** Prefix of every path of this tree ("detect/0"). */
  prefix: string;
  tree: TreeState;
  /** What changed since the previous snapshot (highlighted). */
  changed: IChanged | null;
  /** The variables as shown before, for "was …" next to what changed. */
  previous: { [variable: string]: Tagged } | null;
  /** Fetch one page of a top-level variable (`run.page`), when the snapshot has pages. */
  pager: ((variable: string, start: number, size: number) => Promise<IPageResult>) | null;
  /** Called after a click changed what the tree shows (expand, more, a page came). */
  onChange: () => void;
}

/**
 * A worker's state as an expandable tree: one row per variable (name, type, Python
 * repr), containers open on click, their children PAGE_SIZE at a time; variables and
 * dict keys that changed since the previous snapshot are highlighted.
 */
export function renderStateTree(state: { [variable: string]: Tagged }, options: IStateTreeOptions): HTMLElement {
  const root = el('div', 'jp-icedtea-state-tree');
  root.setAttribute('role', 'tree');
  const changed = options.changed;
  const changedVars = new Set(changed?.variables ?? []);
  const names = Object.keys(state);
  if (!names.length) {
    root.append(el('div', 'jp-icedtea-muted', 'No state variables.'));
  }
  for (const name of names) {
    const changedKeys = new Set((changed?.keys[name] ?? []).map(keyId));
    const variableChanged = changedVars.has(name);
    const path = `${options.prefix}/${name}`;
    const described = describe(state[name]);
    const row = nodeRow(name, described, path, 0, options, variableChanged || changedKeys.size > 0);
    row.dataset.variable = name;
    if (variableChanged && options.previous && name in options.previous) {
      const was = pyRepr(options.previous[name], 80);
      const note = el('span', 'jp-icedtea-was', `was ${was}`);
      note.title = `Before: ${pyRepr(options.previous[name], 1000)}`;
      row.querySelector('.jp-icedtea-tree-line')!.append(note);
    } else if (changedKeys.size) {
      row
        .querySelector('.jp-icedtea-tree-line')!
        .append(el('span', 'jp-icedtea-was', `${changedKeys.size} key${changedKeys.size === 1 ? '' : 's'} changed`));
    }
    root.append(row);
    if (options.tree.expanded.has(path)) {
      root.append(children(described, path, 1, options, changedKeys, name));
    }
  }
  for (const name of changed?.removed ?? []) {
    const row = el('div', 'jp-icedtea-tree-node jp-icedtea-mod-removed');
    row.append(el('div', 'jp-icedtea-tree-line', `${name} (removed)`));
    root.append(row);
  }
  root.addEventListener('click', event => onClick(event, options));
  return root;
}

function nodeRow(
  label: string,
  value: IDescribed,
  path: string,
  depth: number,
  options: IStateTreeOptions,
  changed: boolean
): HTMLElement {
  const node = el('div', 'jp-icedtea-tree-node');
  node.setAttribute('role', 'treeitem');
  node.dataset.path = path;
  node.classList.toggle('jp-icedtea-mod-changed', changed);
  const line = el('div', 'jp-icedtea-tree-line');
  line.style.paddingLeft = `${depth * 14}px`;
  const expandable = !!value.entries && (value.size ?? 0) > 0;
  const open = expandable && options.tree.expanded.has(path);
  if (expandable) {
    node.setAttribute('aria-expanded', String(open));
  }
  const caret = el('span', 'jp-icedtea-caret', expandable ? (open ? '▾' : '▸') : '');
  if (expandable) {
    caret.dataset.toggle = path;
    line.dataset.toggle = path;
    line.classList.add('jp-icedtea-tree-toggle');
  }
  const type =
    value.size !== undefined && value.entries ? `${value.type} · ${value.size.toLocaleString('en-US')}` : value.type;
  const text = el('span', 'jp-icedtea-tree-value', value.text);
  text.title = value.note ? `${value.text}\n${value.note}` : value.text;
  line.append(caret, el('span', 'jp-icedtea-tree-key', label), el('span', 'jp-icedtea-tree-type', type), text);
  if (value.note) {
    line.append(el('span', 'jp-icedtea-tree-note', value.note));
  }
  node.append(line);
  return node;
}

/** The children of an expanded container, a page at a time. */
function children(
  value: IDescribed,
  path: string,
  depth: number,
  options: IStateTreeOptions,
  changedKeys: Set<string>,
  variable: string | null
): HTMLElement {
  const box = el('div', 'jp-icedtea-tree-children');
  box.setAttribute('role', 'group');
  // A summarised top-level variable: its pages come from the kernel.
  if (value.note && variable !== null && options.pager) {
    box.append(pagedChildren(path, depth, options, variable));
    return box;
  }
  const entries = value.entries ? value.entries() : [];
  const shown = Math.min(entries.length, options.tree.shown.get(path) ?? PAGE_SIZE);
  appendEntries(box, entries.slice(0, shown), path, depth, options, changedKeys);
  if (shown < entries.length) {
    const more = el(
      'button',
      'jp-icedtea-link jp-icedtea-tree-more',
      `Show ${Math.min(PAGE_SIZE, entries.length - shown)} more (${shown.toLocaleString('en-US')} of ${entries.length.toLocaleString('en-US')} shown)`
    );
    more.type = 'button';
    more.dataset.more = path;
    more.dataset.count = String(shown + PAGE_SIZE);
    more.style.marginLeft = `${depth * 14 + 14}px`;
    box.append(more);
  }
  return box;
}

function appendEntries(
  box: HTMLElement,
  entries: IEntry[],
  path: string,
  depth: number,
  options: IStateTreeOptions,
  changedKeys: Set<string>
): void {
  for (const entry of entries) {
    const child = `${path}/${entry.keyId}`;
    box.append(nodeRow(entry.label, entry.value, child, depth, options, changedKeys.has(entry.keyId)));
    if (options.tree.expanded.has(child)) {
      box.append(children(entry.value, child, depth + 1, options, new Set(), null));
    }
  }
}

/** Pages of a summarised variable, fetched with `run.page`. */
function pagedChildren(path: string, depth: number, options: IStateTreeOptions, variable: string): HTMLElement {
  const box = el('div', 'jp-icedtea-tree-pages');
  const page = options.tree.pages.get(path);
  if (page === undefined) {
    options.tree.pages.set(path, 'loading');
    void fetchPage(path, variable, 0, options);
  }
  if (page === undefined || page === 'loading') {
    box.append(el('div', 'jp-icedtea-muted', 'Loading a page…'));
    return box;
  }
  if (typeof page === 'string') {
    box.append(el('div', 'jp-icedtea-inline-error', page));
    return box;
  }
  const entries: IEntry[] = page.items.map((item, i) => {
    // Dict-like variables page (key, value) pairs.
    const pair = Array.isArray(item) && item.length === 2 ? item : null;
    return pair
      ? { label: pyRepr(pair[0], 60), keyId: keyId(pair[0]), value: describe(pair[1]) }
      : { label: String(page.start + i), keyId: String(page.start + i), value: describe(item) };
  });
  appendEntries(box, entries, path, depth, options, new Set());
  const nav = el('div', 'jp-icedtea-tree-pager');
  nav.style.marginLeft = `${depth * 14 + 14}px`;
  const end = page.start + page.items.length;
  nav.append(
    el(
      'span',
      'jp-icedtea-muted',
      `${(page.start + 1).toLocaleString('en-US')}–${end.toLocaleString('en-US')} of ${page.total === null ? '?' : page.total.toLocaleString('en-US')}`
    )
  );
  if (page.note) {
    nav.append(el('span', 'jp-icedtea-tree-note', page.note));
  }
  for (const [label, start, enabled] of [
    ['‹ previous', Math.max(0, page.start - PAGE_SIZE), page.start > 0],
    ['next ›', end, page.total === null ? page.items.length === PAGE_SIZE : end < page.total]
  ] as [string, number, boolean][]) {
    const button = el('button', 'jp-icedtea-link', label);
    button.type = 'button';
    button.disabled = !enabled;
    button.dataset.page = path;
    button.dataset.variable = variable;
    button.dataset.start = String(start);
    nav.append(button);
  }
  box.append(nav);
  return box;
}

async function fetchPage(path: string, variable: string, start: number, options: IStateTreeOptions): Promise<void> {
  try {
    options.tree.pages.set(path, await options.pager!(variable, start, PAGE_SIZE));
  } catch (reason) {
    options.tree.pages.set(path, `Cannot load the page: ${reason instanceof Error ? reason.message : String(reason)}`);
  }
  options.onChange();
}

function onClick(event: MouseEvent, options: IStateTreeOptions): void {
  const target = event.target as HTMLElement;
  const more = target.closest<HTMLElement>('[data-more]');
  if (more) {
    options.tree.shown.set(more.dataset.more!, Number(more.dataset.count));
    options.onChange();
    return;
  }
  const page = target.closest<HTMLElement>('[data-page]');
  if (page) {
    options.tree.pages.set(page.dataset.page!, 'loading');
    void fetchPage(page.dataset.page!, page.dataset.variable!, Number(page.dataset.start), options);
    options.onChange();
    return;
  }
  const toggle = target.closest<HTMLElement>('[data-toggle]');
  if (toggle) {
    options.tree.toggle(toggle.dataset.toggle!);
    options.onChange();
  }
}
