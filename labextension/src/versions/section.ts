import type { ISidebarSection } from '../widgets/section';
import { VersionsModel } from './model';
import { VersionsView } from './versionsView';

/** The versions of the selected run's cell (Drove), two compared, the session exported. */
export const versionsSection: ISidebarSection = {
  id: 'versions',
  label: 'Versions',
  caption: "The versions of the selected run's cell: what changed, shared and reused results, a comparison, the export",
  rank: 700,
  collapsed: true,
  create: ({ runs }) => new VersionsView(new VersionsModel(runs)),
  createWide: ({ runs }) => new VersionsView(new VersionsModel(runs))
};
