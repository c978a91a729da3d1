import { SidePanel } from '@jupyterlab/ui-components';
import { AccordionPanel, SplitPanel, Widget } from '@lumino/widgets';

import type { AlertsModel } from './alerts/model';
import type { LineageModel } from './lineage/lineageModel';
import type { ControlModel } from './control/model';
import type { RunsModel } from './runs/model';
import { SECTIONS } from './sections';
import type { SkewModel } from './skew/model';
import type { TimeTravelModel } from './timetravel/timeTravel';
import { el, setText } from './widgets/format';
import { icedteaIcon } from './widgets/icon';
import { ISectionContext, ISidebarSection, SidebarSection } from './widgets/section';

/** The least share of the height an opened section gets (else the sections are rebalanced). */
const MIN_SHARE = 0.05;

/**
 * The IcedTea sidebar: a header (the notebook followed, the state of its kernel) and,
 * for the selected run, collapsible sections (JupyterLab's side panel accordion), one
 * per feature: Run, Interactions, Partitions and steps, Snapshot, Skew, Lineage…
 * Every title stays in view, so every section is one click away at any height; each
 * section scrolls on its own, and the wide ones open in the main area too.
 */
export class IcedteaSidebar extends SidePanel {
  constructor(
    model: RunsModel,
    timeTravel: TimeTravelModel,
    skew: SkewModel,
    lineage: LineageModel,
    options: IcedteaSidebar.IOptions = {}
  ) {
    super();
    this._model = model;
    this.id = 'icedtea-sidebar';
    this.title.icon = icedteaIcon;
    this.title.caption = 'IcedTea: runs of this notebook';
    this.addClass('jp-icedtea-Sidebar');
    this.addClass('jp-icedtea-Scope');

    const header = new Widget({ node: el('div', 'jp-icedtea-header') });
    header.node.append(el('h2', 'jp-icedtea-title', 'IcedTea'), this._notebook);
    this._message.setAttribute('aria-live', 'polite');
    this._problem.setAttribute('role', 'status');
    const messages = new Widget({ node: el('div', 'jp-icedtea-messages') });
    messages.node.append(this._message, this._problem);
    this.header.addWidget(header);
    this.header.addWidget(messages);

    const context: ISectionContext = {
      runs: model,
      timeTravel,
      skew,
      lineage,
      reveal: id => this.reveal(id),
      control: options.control ?? null,
      alerts: options.alerts ?? null
    };
    const open = options.openWide ? (section: ISidebarSection) => options.openWide!(section, context) : null;
    for (const section of [...(options.sections ?? SECTIONS)].sort((a, b) => a.rank - b.rank)) {
      const widget = new SidebarSection(section, section.create(context), open);
      SplitPanel.setStretch(widget, section.weight ?? 1);
      if (section.collapsed) {
        widget.hide(); // the accordion draws a hidden section collapsed
      }
      this.addWidget(widget);
    }
    this.accordion.expansionToggled.connect(this._onExpansion, this);
    model.changed.connect(this._update, this);
    this._update();
  }

  /** The accordion of the sections. */
  get accordion(): AccordionPanel {
    return this.content as AccordionPanel;
  }

  /** Expand the section `id` (a collapsed one is shown) and scroll it into view. */
  reveal(id: string): void {
    const index = this.widgets.findIndex(w => w instanceof SidebarSection && w.section.id === id);
    if (index < 0) {
      return;
    }
    const widget = this.widgets[index];
    if (widget.isHidden) {
      this.accordion.expand(index);
    }
    widget.node.scrollIntoView?.({ block: 'nearest' });
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

  /**
   * A section opened for the first time (it started collapsed) has no size to go back
   * to, and the accordion would leave it at none: the open sections then share the
   * height by their weights.
   */
  private _onExpansion(accordion: AccordionPanel, index: number): void {
    const widget = accordion.widgets[index];
    if (!widget || widget.isHidden || (accordion.relativeSizes()[index] ?? 0) >= MIN_SHARE) {
      return;
    }
    accordion.setRelativeSizes(accordion.widgets.map(w => (w.isHidden ? 0 : SplitPanel.getStretch(w) || 1)));
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
    // The sections describe the selected run: none before there is one.
    this.content.setHidden(!(model.state === 'ready' && model.selectedId !== null));
  }

  private _model: RunsModel;
  private _notebookName: string | null = null;
  private _notebook = el('div', 'jp-icedtea-notebook');
  private _message = el('div', 'jp-icedtea-message');
  private _problem = el('div', 'jp-icedtea-problem');
}

export namespace IcedteaSidebar {
  export interface IOptions {
    /** The sections (default: `SECTIONS`). */
    sections?: readonly ISidebarSection[];
    /** Show a section's wide view in the main area; without it, no "Open in the main area" buttons. */
    openWide?: (section: ISidebarSection, context: ISectionContext) => void;
    /** Live control of the selected run (the live-control section). */
    control?: ControlModel;
    /** The agents' alerts on the selected run (the alerts section). */
    alerts?: AlertsModel;
  }
}
