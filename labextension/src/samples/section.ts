import { RunsModel } from '../runs/model';
import type { ISidebarSection } from '../widgets/section';
import { SamplesModel } from './model';
import { SamplesView } from './samplesView';

function view(runs: RunsModel): SamplesView {
  return new SamplesView(new SamplesModel(runs));
}

/** The DAG's edges, each with a sample of the records that crossed it (`run.samples`). */
export const samplesSection: ISidebarSection = {
  id: 'samples',
  label: 'Samples',
  caption: "The DAG's edges: click one for a uniform sample of its records (--agent samples)",
  rank: 750,
  collapsed: true,
  create: ({ runs }) => view(runs),
  createWide: ({ runs }) => view(runs)
};
