import { launchIcon, Toolbar } from '@jupyterlab/ui-components';
import { Panel, Widget } from '@lumino/widgets';

import type { AlertsModel } from '../alerts/model';
import type { LineageModel } from '../lineage/lineageModel';
import type { ControlModel } from '../control/model';
import type { RunsModel } from '../runs/model';
import type { SkewModel } from '../skew/model';
import type { TimeTravelModel } from '../timetravel/timeTravel';
import { el } from './format';

/** What a section's views are made of: the models of the followed kernel's runs. */
export interface ISectionContext {
  runs: RunsModel;
  timeTravel: TimeTravelModel;
  skew: SkewModel;
  lineage: LineageModel;
  /** Expand a section of the sidebar (by id) and scroll it into view. */
  reveal(section: string): void;
  /** Live control of the selected run (null: no kernel connection to act through). */
  control: ControlModel | null;
  /** The agents' alerts on the selected run (null: no kernel connection). */
  alerts: AlertsModel | null;
}

/**
 * One section of the IcedTea sidebar, contributed by a feature from its own folder
 * (`runs/section.ts`, `timetravel/sections.ts`, `skew/section.ts`…) and listed in
 * `sections.ts`. The sidebar shows them as collapsible sections in `rank` order; a
 * section with `createWide` gets an "Open in the main area" button, which shows the
 * same models in a wide view (tables, snapshots, charts, traces).
 */
export interface ISidebarSection {
  /** `run`, `interactions`, `steps`, `snapshot`, `skew`, `lineage`… (`data-section`). */
  id: string;
  /** The section's title. */
  label: string;
  /** What the section shows, for its title's tooltip. */
  caption: string;
  /** Order in the sidebar, low first. */
  rank: number;
  /** Start collapsed (a view whose feature has not landed, a rarely used one). */
  collapsed?: boolean;
  /** Its share of the sidebar's height among the open sections (default 1). */
  weight?: number;
  /** The view in the sidebar. */
  create(context: ISectionContext): Widget;
  /** A view of the same models for the main area, where it has room. */
  createWide?(context: ISectionContext): Widget;
}

/**
 * The widget of a section in the sidebar's accordion: the feature's view, scrolled on
 * its own, and (in its title bar, as the accordion's toolbar) the "Open in the main
 * area" button.
 */
export class SidebarSection extends Panel {
  constructor(
    readonly section: ISidebarSection,
    view: Widget,
    openWide: ((section: ISidebarSection) => void) | null
  ) {
    super();
    this.id = `icedtea-section-${section.id}`;
    this.addClass('jp-icedtea-section');
    this.node.dataset.section = section.id;
    this.title.label = section.label;
    this.title.caption = section.caption;
    this.addWidget(view);
    if (section.createWide && openWide) {
      const toolbar = new Toolbar();
      toolbar.addClass('jp-icedtea-section-toolbar');
      const item = new Widget({ node: el('div', 'jp-icedtea-open-wide-item') });
      const button = el('button', 'jp-icedtea-icon-button jp-icedtea-open-wide');
      button.type = 'button';
      button.dataset.section = section.id;
      button.title = `Open ${section.label} in the main area`;
      button.setAttribute('aria-label', button.title);
      launchIcon.element({ container: button, elementSize: 'small' });
      // The accordion toggles a section on any click in its title: not on this one.
      button.addEventListener('click', event => {
        event.stopPropagation();
        event.preventDefault();
        openWide(section);
      });
      button.addEventListener('keydown', event => event.stopPropagation());
      item.node.append(button);
      toolbar.addItem('open-wide', item);
      this.toolbar = toolbar;
    }
  }

  /** The accordion puts it in the section's title bar (JupyterLab's `AccordionToolbar`). */
  readonly toolbar: Toolbar | undefined;
}
