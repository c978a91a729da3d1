import type { IResultChange, IVersionDiff } from '../comm/protocol';
import { el, formatShortCount, setChildren } from '../widgets/format';

/** Two versions compared (`run.diff`): operators and sources changed, the results side
 * by side (rows only in one), the cells' code diff. */
export class DiffView {
  readonly node = el('div', 'jp-icedtea-version-diff');

  render(diff: IVersionDiff | null): void {
    if (diff === null) {
      setChildren(this.node, [el('p', 'jp-icedtea-muted', 'Tick two versions to compare them.')]);
      return;
    }
    const parts: HTMLElement[] = [el('div', 'jp-icedtea-diff-title', `${diff.here} against ${diff.there}`)];
    const changes = el('ul', 'jp-icedtea-diff-operators');
    const line = (text: string, kind: string): void => {
      changes.appendChild(el('li', `jp-icedtea-diff-${kind}`, text));
    };
    diff.added.forEach(name => line(`+ ${name}`, 'added'));
    diff.removed.forEach(name => line(`− ${name}`, 'removed'));
    for (const [name, what] of Object.entries(diff.changed)) {
      const values = diff.values?.[name]?.length ? ` (${diff.values[name].join('; ')})` : '';
      line(`${diff.sources.includes(name) ? 'source ' : ''}${name}: ${what.join(', ')}${values}`, 'changed');
    }
    (diff.settings ?? []).forEach(change => line(`setting ${change}`, 'changed'));
    if (!changes.childElementCount) {
      line('same operators and sources', 'same');
    }
    parts.push(changes, countsTable(diff), ...diff.results.map(resultNode));
    if (diff.code) {
      parts.push(el('pre', 'jp-icedtea-diff-code', diff.code));
    }
    setChildren(this.node, parts);
  }
}

/** Records in and out of each Python operator, the later version first. */
function countsTable(diff: IVersionDiff): HTMLTableElement {
  const table = el('table', 'jp-icedtea-diff-counts');
  const head = el('tr');
  for (const title of ['Operator', `in ${short(diff.here)}`, 'out', `in ${short(diff.there)}`, 'out']) {
    head.appendChild(el('th', undefined, title));
  }
  table.appendChild(head);
  for (const row of diff.counts) {
    const tr = el('tr', 'jp-icedtea-diff-count');
    tr.dataset.operator = row.operator;
    const values = [row.here_in, row.here_out, row.there_in, row.there_out];
    tr.appendChild(el('td', undefined, row.operator));
    values.forEach(v => tr.appendChild(el('td', undefined, formatShortCount(v))));
    tr.classList.toggle('jp-mod-changed', row.here_in !== row.there_in || row.here_out !== row.there_out);
    table.appendChild(tr);
  }
  return table;
}

function short(version: string): string {
  return version.replace(/^cell \d+, /, '');
}

function resultNode(change: IResultChange): HTMLElement {
  const node = el('div', 'jp-icedtea-diff-result');
  node.dataset.same = String(change.same);
  node.appendChild(el('div', undefined, `${change.action}: ${change.same ? 'same result' : 'results differ'}`));
  for (const [rows, label] of [
    [change.only_here, 'only here'],
    [change.only_there, 'only there']
  ] as const) {
    if (rows && rows.length) {
      node.appendChild(rowsTable(rows, `${rows.length} ${rows.length === 1 ? 'row' : 'rows'} ${label}`));
    }
  }
  return node;
}

function rowsTable(rows: ReadonlyArray<{ [column: string]: unknown }>, caption: string): HTMLTableElement {
  const table = el('table', 'jp-icedtea-diff-rows');
  table.appendChild(el('caption', undefined, caption));
  const columns = Object.keys(rows[0]);
  const head = el('tr');
  columns.forEach(c => head.appendChild(el('th', undefined, c)));
  table.appendChild(head);
  for (const row of rows.slice(0, 20)) {
    const tr = el('tr');
    columns.forEach(c => tr.appendChild(el('td', undefined, String(row[c]))));
    table.appendChild(tr);
  }
  return table;
}
