import { Placeholder } from '../widgets/placeholder';
import type { ISidebarSection } from '../widgets/section';
import { ControlView } from './controlView';

/** Live control (Amber): pause/resume, live states, breakpoints and their hits. */
export const controlSection: ISidebarSection = {
  id: 'control',
  label: 'Live control',
  caption: 'Pause and resume the running job, look at a live state, breakpoints and their hits',
  rank: 150,
  collapsed: true, // a hit reveals it (index.ts)
  weight: 3,
  create: ({ control }) =>
    control
      ? new ControlView(control)
      : new Placeholder({ id: 'control', text: 'Live control needs a connection to the kernel.' })
};
