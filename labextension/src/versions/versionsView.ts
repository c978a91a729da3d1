import type { Message } from '@lumino/messaging';
import { Widget } from '@lumino/widgets';

import { RedrawWhenShown } from '../widgets/redrawWhenShown';
import { el, setChildren, setText } from '../widgets/format';
import { DiffView } from './diffView';
import type { VersionsModel } from './model';
import { VersionsTable } from './versionsTable';

/** The versions dashboard: the selected run's cell's versions, two compared, and the
 * export of the debugging session (of the run being debugged) as a notebook. */
export class VersionsView extends Widget {
  constructor(private readonly _model: VersionsModel) {
    super();
    this.addClass('jp-icedtea-VersionsView');
    this._table = new VersionsTable(_model);
    this._diff = new DiffView();
    this._path = el('input', 'jp-icedtea-export-path');
    this._path.setAttribute('aria-label', 'notebook to write');
    const button = el('button', 'jp-Button jp-mod-styled jp-icedtea-export', 'Export session');
    button.title = 'The session of the run being debugged as a notebook that re-executes (run.export_notebook)';
    button.addEventListener('click', () => void this._export());
    const exportRow = el('div', 'jp-icedtea-export-row');
    setChildren(exportRow, [this._path, button]);
    setChildren(this.node, [this._status, this._table.node, this._diff.node, exportRow, this._exported]);
    _model.changed.connect(this._onChanged, this);
    _model.runs.changed.connect(this._onChanged, this);
    this._render();
  }

  dispose(): void {
    this._model.changed.disconnect(this._onChanged, this);
    this._model.runs.changed.disconnect(this._onChanged, this);
    this._model.dispose(); // the view's own model
    super.dispose();
  }

  private async _export(): Promise<void> {
    await this._model.exportSession(this._path.value.trim() || this._defaultPath());
  }

  private _defaultPath(): string {
    return `debug-${this._model.runs.selectedId ?? 'run'}.ipynb`;
  }

  protected onAfterShow(msg: Message): void {
    super.onAfterShow(msg);
    this._redraw.shown();
  }

  /** Drawn now, or once shown if its section is collapsed. */
  private _onChanged(): void {
    this._redraw.request();
  }

  private _render(): void {
    const model = this._model;
    const count = model.versions.length;
    const cell = count ? model.versions[0].version.replace(/, v\d+$/, '') : '';
    setText(
      this._status,
      model.error ??
        (count ? `${cell}: ${count} ${count === 1 ? 'version' : 'versions'}` : 'No versions of this run yet.')
    );
    this._status.classList.toggle('jp-icedtea-problem', model.error !== null);
    this._table.render();
    this._diff.render(model.diff);
    this._path.placeholder = this._defaultPath();
    const exported = model.exported;
    setText(
      this._exported,
      exported
        ? `Wrote ${exported.path}: the session of run ${exported.run} (${exported.version})` +
            (exported.hand.length ? ` · needs your hand: ${exported.hand.join('; ')}` : '')
        : ''
    );
  }

  private _table: VersionsTable;
  private _diff: DiffView;
  private _path: HTMLInputElement;
  private _status = el('div', 'jp-icedtea-versions-status');
  private _exported = el('div', 'jp-icedtea-exported');

  private readonly _redraw = new RedrawWhenShown(this, () => this._render());
}
