import { el, formatShortCount, setChildren } from '../widgets/format';
import type { VersionsModel } from './model';

/**
 * The versions of the selected run's cell, oldest first: what changed since the one
 * before, which share a result, which were answered from the store, bytes stored.
 * A checkbox per version chooses the two to compare.
 */
export class VersionsTable {
  constructor(private readonly _model: VersionsModel) {
    this.node = el('table', 'jp-icedtea-versions-table');
    this.node.addEventListener('change', this._onChange);
  }

  readonly node: HTMLTableElement;

  render(): void {
    const model = this._model;
    const head = el('tr');
    for (const title of ['', 'version', 'changed', 'result']) {
      head.appendChild(el('th', undefined, title));
    }
    const rows = model.versions.map(v => {
      const row = el('tr', 'jp-icedtea-version');
      row.dataset.run = v.run;
      row.dataset.version = v.version;
      row.classList.toggle('jp-mod-selected', v.run === model.runs.selectedId);
      const box = el('input');
      box.type = 'checkbox';
      box.checked = model.chosen.includes(v.run);
      box.title = 'Choose two versions to compare';
      box.setAttribute('aria-label', `compare ${v.version}`);
      box.dataset.run = v.run;
      const pick = el('td');
      pick.appendChild(box);
      const result = v.reused_from
        ? `reused from ${v.reused_from}`
        : v.same_result_as
          ? `same as ${v.same_result_as}`
          : v.result
            ? `${formatShortCount(v.bytes_stored)} B new`
            : '–';
      const cells = [
        pick,
        el('td', 'jp-icedtea-version-label', v.version.replace(/^cell \d+, /, '')),
        el('td', 'jp-icedtea-version-changed', v.changed),
        el('td', 'jp-icedtea-version-result', result)
      ];
      cells[2].title = v.changed;
      cells[3].title = v.result ? `result ${v.result} · ${v.status}` : v.status;
      setChildren(row, cells);
      return row;
    });
    setChildren(this.node, [head, ...rows]);
  }

  private _onChange = (event: Event): void => {
    const target = event.target as HTMLInputElement;
    if (target.dataset.run) {
      this._model.toggle(target.dataset.run);
    }
  };
}
