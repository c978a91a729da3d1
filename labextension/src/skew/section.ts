import type { ISidebarSection } from '../widgets/section';
import { SkewView } from './skewView';

/** The load of each partition, its heavy keys and the skew test (Reshape): `run.skew(op)`. */
export const skewSection: ISidebarSection = {
  id: 'skew',
  label: 'Skew',
  caption: 'The load of each partition stacked by heavy key, the skew test and advice',
  rank: 500,
  weight: 3,
  create: ({ skew }) => new SkewView(skew),
  createWide: ({ skew }) => new SkewView(skew)
};
