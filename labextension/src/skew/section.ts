import { Placeholder } from '../widgets/placeholder';
import type { ISidebarSection } from '../widgets/section';

/** The load of each partition and the skew test (Reshape); a placeholder until skew lands. */
export const skewSection: ISidebarSection = {
  id: 'skew',
  label: 'Skew',
  caption: 'The load of each partition and the skew test',
  rank: 500,
  collapsed: true,
  create: () =>
    new Placeholder({
      id: 'skew',
      text: 'The load of each partition (records, bytes, time) and the skew test fill in here once skew analysis lands; run.skew(operator) will draw the same chart.'
    })
};
