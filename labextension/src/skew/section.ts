import type { TimeTravelModel } from '../timetravel/timeTravel';
import type { ISidebarSection } from '../widgets/section';
import type { SkewModel } from './model';
import { SkewView } from './skewView';

const following = new WeakSet<SkewModel>();

/** A partition clicked in the chart is the one time travel's sections show. */
function followPartitions(skew: SkewModel, timeTravel: TimeTravelModel): void {
  if (!following.has(skew)) {
    following.add(skew);
    skew.partitionSelected.connect((_, partition) => timeTravel.snapshot.selectPartition(partition));
  }
}

/** The load of each partition, its heavy keys and the skew test (Reshape): `run.skew(op)`. */
export const skewSection: ISidebarSection = {
  id: 'skew',
  label: 'Skew',
  caption: 'The load of each partition stacked by heavy key, the skew test and advice',
  rank: 500,
  collapsed: true,
  weight: 3,
  create: ({ skew, timeTravel }) => {
    followPartitions(skew, timeTravel);
    return new SkewView(skew);
  },
  createWide: ({ skew }) => new SkewView(skew)
};
