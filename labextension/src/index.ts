import { ILayoutRestorer, JupyterFrontEnd, JupyterFrontEndPlugin } from '@jupyterlab/application';
import { INotebookTracker } from '@jupyterlab/notebook';

import { IcedteaClient } from './comm/client';
import { NotebookFollower } from './runs/follower';
import { RunsModel } from './runs/model';
import { IcedteaSidebar } from './sidebar';
import { TimeTravelModel } from './timetravel/timeTravel';

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
    const sidebar = new IcedteaSidebar(runs, new TimeTravelModel(runs, client));
    app.shell.add(sidebar, 'left', { rank: 650 });
    restorer?.add(sidebar, sidebar.id);
    new NotebookFollower(tracker, client, sidebar);
  }
};

export default plugin;
