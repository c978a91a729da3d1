import type { ISidebarSection } from '../widgets/section';
import { LineageView } from './lineageView';

/** Backward and forward traces of the selected run's records (Titian), linked to time travel. */
export const lineageSection: ISidebarSection = {
  id: 'lineage',
  label: 'Lineage',
  caption: 'Trace an output row back to its source records, a source record forward; jump to when θ received it',
  rank: 600,
  collapsed: true,
  weight: 3,
  create: ({ lineage, reveal }) => new LineageView(lineage, reveal),
  createWide: ({ lineage, reveal }) => new LineageView(lineage, reveal)
};
