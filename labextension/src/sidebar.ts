import { Panel, Widget } from '@lumino/widgets';

import type { RunsModel } from './runs/model';
import { Placeholder } from './runs/placeholder';
import { RunsList } from './runs/runsList';
import { RunView } from './runs/runView';
import { PartitionSteps } from './timetravel/partitionSteps';
import { SnapshotView } from './timetravel/snapshotView';
import { TimelineView } from './timetravel/timelineView';
import type { TimeTravelModel } from './timetravel/timeTravel';
import { el, setText } from './widgets/format';
import { icedteaIcon } from './widgets/icon';

/**
 * The IcedTea sidebar, a thin container: a header, a state message, the runs list, the
 * selected run (operators with θ and G(θ), alerts), its interaction timeline, its
 * partitions with the step controls, the snapshot shown, and the places of the skew
 * and lineage views.
 */
export class IcedteaSidebar extends Panel {
  constructor(model: RunsModel, timeTravel: TimeTravelModel) {
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
    this.addWidget(new TimelineView(timeTravel));
    this.addWidget(new PartitionSteps(timeTravel));
    this.addWidget(new SnapshotView(timeTravel));
    this.addWidget(
      new Placeholder(model, {
        id: 'skew',
        title: 'Skew',
        text: 'The load of each partition (records, bytes, time) and the skew test fill in here once skew analysis lands; run.skew(operator) will draw the same chart.'
      })
    );
    this.addWidget(
      new Placeholder(model, {
        id: 'lineage',
        title: 'Lineage',
        text: 'Backward and forward traces of output rows fill in here once lineage capture lands (--lineage, run.trace_back / run.trace_forward).'
      })
    );
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
          message.append(
            'No runs yet: put ',
            el('code', undefined, '%%icedtea'),
            ' on a cell of PySpark code and run it.'
          );
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
