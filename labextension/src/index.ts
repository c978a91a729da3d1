import { ILayoutRestorer, JupyterFrontEnd, JupyterFrontEndPlugin } from '@jupyterlab/application';
import { MainAreaWidget } from '@jupyterlab/apputils';
import { INotebookTracker } from '@jupyterlab/notebook';

import { IcedteaClient } from './comm/client';
import { LineageModel } from './lineage/lineageModel';
import { NotebookFollower } from './runs/follower';
import { ControlModel } from './control/model';
import { RunsModel } from './runs/model';
import { IcedteaSidebar } from './sidebar';
import { AlertsModel } from './alerts/model';
import { SkewModel } from './skew/model';
import { TimeTravelModel } from './timetravel/timeTravel';
import { icedteaIcon } from './widgets/icon';
import type { ISectionContext, ISidebarSection } from './widgets/section';

/** The IcedTea sidebar, fed by the `icedtea` comm of the current notebook's kernel. */
const plugin: JupyterFrontEndPlugin<void> = {
  id: 'icedtea-jupyter:sidebar',
  description:
    'Runs, live operator counts, interaction timeline, snapshots and step debugging of the PySpark pipelines recorded with %%icedtea.',
  autoStart: true,
  requires: [INotebookTracker],
  optional: [ILayoutRestorer],
  activate: (app: JupyterFrontEnd, tracker: INotebookTracker, restorer: ILayoutRestorer | null) => {
    const client = new IcedteaClient();
    const runs = new RunsModel(client);
    const wide = new Map<string, MainAreaWidget>();
    // A section's wide view: the same models, in the main area beside the notebook.
    const openWide = (section: ISidebarSection, context: ISectionContext) => {
      let widget = wide.get(section.id);
      if (!widget || widget.isDisposed) {
        const content = section.createWide!(context);
        content.addClass('jp-icedtea-Scope');
        content.addClass('jp-icedtea-Wide');
        widget = new MainAreaWidget({ content });
        widget.id = `icedtea-wide-${section.id}`;
        widget.addClass('jp-icedtea-WideArea');
        widget.node.dataset.section = section.id;
        widget.title.label = `IcedTea: ${section.label}`;
        widget.title.caption = section.caption;
        widget.title.icon = icedteaIcon;
        widget.title.closable = true;
        wide.set(section.id, widget);
        app.shell.add(widget, 'main', { mode: 'split-right' });
      }
      app.shell.activateById(widget.id);
    };
    const timeTravel = new TimeTravelModel(runs, client);
    const lineage = new LineageModel(runs, client, timeTravel.debug);
    const control = new ControlModel(runs, client);
    const skew = new SkewModel(runs, client);
    const alerts = new AlertsModel(runs, client);
    const sidebar = new IcedteaSidebar(runs, timeTravel, skew, lineage, { openWide, control, alerts });
    // A hit waits for the user: show the sidebar and open its live-control section.
    control.hitArrived.connect(() => {
      app.shell.activateById(sidebar.id);
      sidebar.reveal('control');
    });
    app.shell.add(sidebar, 'left', { rank: 650 });
    restorer?.add(sidebar, sidebar.id);
    new NotebookFollower(tracker, client, sidebar);
  }
};

export default plugin;
