import { Placeholder } from '../widgets/placeholder';
import type { ISidebarSection } from '../widgets/section';

/** Backward and forward traces of output rows (Titian); a placeholder until lineage lands. */
export const lineageSection: ISidebarSection = {
  id: 'lineage',
  label: 'Lineage',
  caption: 'Backward and forward traces of output rows',
  rank: 600,
  collapsed: true,
  create: () =>
    new Placeholder({
      id: 'lineage',
      text: 'Backward and forward traces of output rows fill in here once lineage capture lands (--lineage, run.trace_back / run.trace_forward).'
    })
};
