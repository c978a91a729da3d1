import { Panel } from '@lumino/widgets';

import { BreakpointList } from './breakpointList';
import { HitEditor } from './hitEditor';
import type { ControlModel } from './model';
import { PauseBar } from './pauseBar';
import { StateProbe } from './stateProbe';

/** The live-control section: pause and resume, a state probe, breakpoints, hits. */
export class ControlView extends Panel {
  constructor(model: ControlModel) {
    super();
    this.addClass('jp-icedtea-ControlView');
    this.addWidget(new PauseBar(model));
    this.addWidget(new StateProbe(model));
    this.addWidget(new HitEditor(model));
    this.addWidget(new BreakpointList(model));
  }
}
