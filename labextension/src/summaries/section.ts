import { RunsModel } from '../runs/model';
import type { ISidebarSection } from '../widgets/section';
import { SummariesModel } from './model';
import { SummariesView } from './summariesView';

function view(runs: RunsModel): SummariesView {
  return new SummariesView(new SummariesModel(runs));
}

/** The selected run's summaries against an earlier run of its cell (`run.summary_diff`). */
export const summariesSection: ISidebarSection = {
  id: 'summaries',
  label: 'Summaries',
  caption: 'What changed in the data since an earlier run of the cell: shifted fields, new nulls (--agent summaries)',
  rank: 760,
  collapsed: true,
  create: ({ runs }) => view(runs),
  createWide: ({ runs }) => view(runs)
};
