/**
 * The sections of the IcedTea sidebar, one per feature, each defined in its feature's
 * folder. A new feature (live control, gadget tools, versions…) adds its folder with a
 * `section.ts` exporting an `ISidebarSection`, and one line here.
 */
import { alertsSection } from './alerts/section';
import { controlSection } from './control/section';
import { lineageSection } from './lineage/section';
import { runSection } from './runs/section';
import { samplesSection } from './samples/section';
import { skewSection } from './skew/section';
import { summariesSection } from './summaries/section';
import { timeTravelSections } from './timetravel/sections';
import { versionsSection } from './versions/section';
import type { ISidebarSection } from './widgets/section';

export const SECTIONS: readonly ISidebarSection[] = [
  runSection,
  controlSection,
  ...timeTravelSections,
  skewSection,
  lineageSection,
  versionsSection,
  samplesSection,
  summariesSection,
  alertsSection
];
