import { Panel, Widget } from '@lumino/widgets';

import { el, setText } from './format';
import { icedteaIcon } from './icon';
import type { RunsModel } from './model';
import { RunsList } from './runsList';
import { RunView } from './runView';

/** The IcedTea sidebar: a header, a state message, the runs list and the selected run. */
export class IcedteaSidebar extends Panel {
  constructor(model: RunsModel) {
    super();
    this._model = model;
    this.id = 'icedtea-sidebar';
    this.title.icon = icedteaIcon;
    this.title.caption = 'IcedTea: runs of this notebook';
    this.addClass('jp-icedtea-Sidebar');

    const header = new Widget({ node: el('div', 'jp-icedtea-header') });
    header.node.append(el('h2', 'jp-icedtea-title', 'IcedTea'), this._notebook);
    this._message.setAttribute('aria-live', 'polite');
    this._problem.setAttribute('role', 'status');
    const messages = new Widget({ node: el('div', 'jp-icedtea-messages') });
    messages.node.append(this._message, this._problem);

    this.addWidget(header);
    this.addWidget(messages);
    this.addWidget(new RunsList(model));
    this.addWidget(new RunView(model));
    model.changed.connect(this._update, this);
    this._update();
  }

  /** The notebook whose kernel is followed (null: none). */
  setNotebook(name: string | null): void {
    this._notebookName = name;
    this._update();
  }

  dispose(): void {
    if (this.isDisposed) {
      return;
    }
    this._model.changed.disconnect(this._update, this);
    super.dispose();
  }

  private _update(): void {
    const model = this._model;
    setText(this._notebook, this._notebookName ?? '');
    this._notebook.title = this._notebookName ?? '';
    const message = this._message;
    message.dataset.state = model.state;
    message.replaceChildren();
    switch (model.state) {
      case 'disconnected':
        message.textContent = this._notebookName
          ? 'The notebook has no running kernel.'
          : 'Open a notebook to see its IcedTea runs.';
        break;
      case 'connecting':
        message.textContent = 'Connecting to the kernel…';
        break;
      case 'unavailable':
        message.append('Run ', el('code', undefined, '%load_ext icedtea_jupyter'), ' in this notebook');
        message.classList.add('jp-icedtea-empty');
        break;
      case 'ready':
        if (model.runs.length === 0) {
          message.append('No runs yet: put ', el('code', undefined, '%%icedtea'), ' on a cell of PySpark code and run it.');
        }
        break;
    }
    message.classList.toggle('jp-icedtea-empty', model.state === 'unavailable');
    message.hidden = message.childNodes.length === 0;
    setText(this._problem, model.lastError ?? '');
    this._problem.hidden = !model.lastError;
  }

  private _model: RunsModel;
  private _notebookName: string | null = null;
  private _notebook = el('div', 'jp-icedtea-notebook');
  private _message = el('div', 'jp-icedtea-message');
  private _problem = el('div', 'jp-icedtea-problem');
}
