import { el, setText } from '../widgets/format';
import { ModelView } from '../widgets/modelView';
import type { ControlModel } from './model';

/** Pause / Resume of the selected run, its state in words, the last action's answer. */
export class PauseBar extends ModelView<ControlModel> {
  constructor(model: ControlModel) {
    super(model);
    this.addClass('jp-icedtea-PauseBar');
    this._status = el('span', 'jp-icedtea-control-status');
    this._pause = button('Pause', 'jp-icedtea-pause', 'Every running task holds between two records (run.pause())');
    this._resume = button('Resume', 'jp-icedtea-resume', 'The tasks go on (run.resume())');
    this._message = el('div', 'jp-icedtea-control-message jp-icedtea-muted');
    this._message.setAttribute('aria-live', 'polite');
    this._pause.addEventListener('click', () => void model.pause());
    this._resume.addEventListener('click', () => void model.resume());
    const row = el('div', 'jp-icedtea-control-row');
    row.append(this._status, this._pause, this._resume);
    this.node.append(row, this._message);
    this._follow();
  }

  protected _render(): void {
    const view = this._model.view;
    const running = view?.running ?? false;
    const paused = view?.paused ?? false;
    setText(
      this._status,
      view === null
        ? 'No run selected'
        : view.stopped
          ? 'Stopped'
          : !running
            ? 'Not running'
            : paused
              ? 'Paused'
              : 'Running'
    );
    this._status.dataset.state = paused ? 'paused' : running ? 'running' : 'ended';
    this._pause.disabled = !running || paused;
    this._resume.disabled = !running || !paused;
    setText(this._message, this._model.message);
  }

  private _status: HTMLSpanElement;
  private _pause: HTMLButtonElement;
  private _resume: HTMLButtonElement;
  private _message: HTMLDivElement;
}

export function button(text: string, className: string, title: string): HTMLButtonElement {
  const node = el('button', `jp-icedtea-button ${className}`, text);
  node.type = 'button';
  node.title = title;
  return node;
}
