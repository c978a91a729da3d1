import type { ISidebarSection } from '../widgets/section';
import { RunView } from './runView';

/** The selected run (picks another), its Python operators with live counts, its alerts. */
export const runSection: ISidebarSection = {
  id: 'run',
  label: 'Run',
  caption: 'The selected run: status, cell, store, Python operators with live counts, alerts',
  rank: 100,
  weight: 3,
  create: ({ runs, timeTravel }) => new RunView(runs, timeTravel.debug),
  createWide: ({ runs, timeTravel }) => new RunView(runs, timeTravel.debug)
};
