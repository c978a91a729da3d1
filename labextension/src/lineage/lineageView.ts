import type { Message } from '@lumino/messaging';

import { el, setText } from '../widgets/format';
import { ModelView } from '../widgets/modelView';
import type { LineageModel } from './lineageModel';
import { OutputsView } from './outputsView';
import { TraceView } from './traceView';

/**
 * The Lineage view of the selected run (Titian): pick an output row, see its backward
 * trace and source records; a source record's forward trace; jump the debugger to when
 * θ received a record (`reveal` shows the time-travel sections).
 */
export class LineageView extends ModelView<LineageModel> {
  constructor(model: LineageModel, reveal: (section: string) => void) {
    super(model);
    this.addClass('jp-icedtea-LineageView');
    this._outputs = new OutputsView(model);
    const onJump = () => {
      reveal('steps');
      reveal('snapshot');
    };
    this._back = new TraceView(model, 'back', onJump);
    this._forward = new TraceView(model, 'forward', onJump);
    this._status.setAttribute('aria-live', 'polite');
    this._error.setAttribute('role', 'alert');
    this.node.append(this._status, this._error, this._outputs.node, this._back.node, this._forward.node);
    this._follow();
  }

  dispose(): void {
    if (this.isDisposed) {
      return;
    }
    this._outputs.dispose();
    super.dispose();
  }

  protected onAfterShow(msg: Message): void {
    super.onAfterShow(msg);
    this._model.show();
  }

  protected onAfterAttach(): void {
    if (this.isVisible) {
      this._model.show();
    }
  }

  protected _render(): void {
    const model = this._model;
    this.node.dataset.busy = model.busy ? 'true' : 'false';
    setText(this._status, this._statusText());
    this._status.hidden = !this._status.textContent;
    const error = model.error;
    this._error.hidden = !error;
    this._error.dataset.type = error?.type ?? '';
    setText(this._error, error ? `Could not ${error.action}: ${error.message}` : '');
    this._outputs.render();
    this._back.render();
    this._forward.render();
  }

  private _statusText(): string {
    const model = this._model;
    if (model.runId === null) {
      return '';
    }
    if (!model.available) {
      return 'Traces follow records once the run has ended (record it with %%icedtea --lineage).';
    }
    if (model.busy) {
      return `Working: ${model.busy}…`;
    }
    return '';
  }

  private _outputs: OutputsView;
  private _back: TraceView;
  private _forward: TraceView;
  private _status = el('div', 'jp-icedtea-lineage-status jp-icedtea-muted');
  private _error = el('div', 'jp-icedtea-inline-error jp-icedtea-lineage-error');
}
