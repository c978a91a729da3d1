import { Widget } from '@lumino/widgets';

import type { ISidebarSection } from '../widgets/section';
import { el } from '../widgets/format';
import { AlertsView } from './alertsView';

/**
 * Every tool's alerts, grouped, with their records (`run.alerts()`). Starts collapsed;
 * opens itself when the followed run's first alert arrives.
 */
export const alertsSection: ISidebarSection = {
  id: 'alerts',
  label: 'Alerts',
  caption: "The agents' alerts on the selected run, by tool and check, with their records",
  rank: 120,
  collapsed: true,
  weight: 2,
  create: ({ alerts, reveal }) => {
    if (alerts === null) {
      return new Widget({ node: el('div', 'jp-icedtea-muted', 'No kernel connection.') });
    }
    alerts.firstArrived.connect(() => reveal('alerts'));
    return new AlertsView(alerts);
  }
};
