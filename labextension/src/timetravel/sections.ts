import type { ISidebarSection } from '../widgets/section';
import { PartitionSteps } from './partitionSteps';
import { SnapshotView } from './snapshotView';
import { TimelineView } from './timelineView';

/** The interaction timeline and the list of interactions; a click jumps there. */
export const interactionsSection: ISidebarSection = {
  id: 'interactions',
  label: 'Interactions',
  caption: 'The interaction timeline: a click shows its snapshot, or jumps there once the run has ended',
  rank: 200,
  weight: 3,
  create: ({ timeTravel }) => new TimelineView(timeTravel),
  createWide: ({ timeTravel }) => new TimelineView(timeTravel)
};

/** The partitions of G(θ) with the step controls. */
export const stepsSection: ISidebarSection = {
  id: 'steps',
  label: 'Partitions and steps',
  caption: "Each partition's next record, and step over / into / out",
  rank: 300,
  weight: 3,
  create: ({ timeTravel }) => new PartitionSteps(timeTravel),
  createWide: ({ timeTravel }) => new PartitionSteps(timeTravel)
};

/** The states of the selected partition's workers, what changed highlighted. */
export const snapshotSection: ISidebarSection = {
  id: 'snapshot',
  label: 'Snapshot',
  caption: "The states of the selected partition's workers, what changed highlighted",
  rank: 400,
  weight: 4,
  create: ({ timeTravel }) => new SnapshotView(timeTravel),
  createWide: ({ timeTravel }) => new SnapshotView(timeTravel)
};

export const timeTravelSections = [interactionsSection, stepsSection, snapshotSection];
