import { pyRepr } from '../comm/tagged';
import type { Tagged } from '../comm/protocol';
import { el, setChildren, setText } from '../widgets/format';
import { ModelView } from '../widgets/modelView';
import type { ControlModel, HitAction } from './model';
import { button } from './pauseBar';
import { parseReplacement, where } from './texts';

/**
 * The hit waiting for a decision: where, the record, the worker's state, an editor
 * for the record (its tagged JSON) and Skip / Replace / Resume / Stop; under it, the
 * run's earlier hits with what was decided.
 */
export class HitEditor extends ModelView<ControlModel> {
  constructor(model: ControlModel) {
    super(model);
    this.addClass('jp-icedtea-HitEditor');
    this._where = el('div', 'jp-icedtea-hit-where');
    this._record = el('pre', 'jp-icedtea-hit-record');
    this._state = el('pre', 'jp-icedtea-hit-state');
    this._editor = el('textarea', 'jp-icedtea-hit-editor');
    this._editor.setAttribute('aria-label', 'The replacement record (tagged JSON)');
    this._error = el('div', 'jp-icedtea-inline-error');
    const actions = el('div', 'jp-icedtea-control-row');
    for (const [action, text, title] of ACTIONS) {
      const node = button(text, `jp-icedtea-hit-${action}`, title);
      node.addEventListener('click', () => void this._decide(action));
      this._buttons.set(action, [node, title]);
      actions.append(node);
    }
    this._pending = el('div', 'jp-icedtea-hit-pending');
    this._pending.append(this._where, this._record, this._state, this._editor, this._error, actions);
    this._history = el('ul', 'jp-icedtea-hits');
    this.node.append(el('div', 'jp-icedtea-subtitle', 'Hits'), this._pending, this._history);
    this._follow();
  }

  private async _decide(action: HitAction): Promise<void> {
    const hit = this._model.pendingHit;
    if (hit === null) {
      return;
    }
    let record: Tagged = undefined;
    if (action === 'replace') {
      const parsed = parseReplacement(this._editor.value);
      if ('error' in parsed) {
        setText(this._error, parsed.error);
        return;
      }
      record = parsed.record;
    }
    setText(this._error, '');
    await this._model.decide(hit.index, action, record);
  }

  protected _render(): void {
    const hit = this._model.pendingHit;
    this._pending.hidden = hit === null;
    if (hit !== null && this._shown !== hit.index) {
      this._shown = hit.index;
      setText(this._where, where(hit));
      setText(this._record, `record: ${pyRepr(hit.record)}`);
      setText(
        this._state,
        Object.entries(hit.state)
          .map(([name, value]) => `${name} = ${pyRepr(value)}`)
          .join('\n')
      );
      this._editor.value = JSON.stringify(hit.record);
      this._offer(hit.actions, hit.refused ?? '');
    }
    const done = (this._model.view?.hits ?? []).filter(h => h.decision !== null);
    setChildren(
      this._history,
      done.map(h => el('li', 'jp-icedtea-hit', `${where(h)} · ${pyRepr(h.record)} → ${h.decision}`))
    );
  }

  /** Only the decisions the hit allows are enabled; the others say why not. */
  private _offer(allowed: string[] | undefined, refused: string): void {
    for (const [action, [node, title]] of this._buttons) {
      const offered = allowed === undefined || allowed.includes(action);
      node.disabled = !offered;
      node.title = offered ? title : refused;
    }
    this._editor.hidden = allowed !== undefined && !allowed.includes('replace');
    setText(this._error, allowed === undefined || allowed.length === ACTIONS.length ? '' : refused);
  }

  private _buttons = new Map<HitAction, [HTMLButtonElement, string]>();
  private _shown: number | null = null;
  private _where: HTMLDivElement;
  private _record: HTMLPreElement;
  private _state: HTMLPreElement;
  private _editor: HTMLTextAreaElement;
  private _error: HTMLDivElement;
  private _pending: HTMLDivElement;
  private _history: HTMLUListElement;
}

const ACTIONS: [HitAction, string, string][] = [
  ['skip', 'Skip', 'Drop the record (kept in the quarantine) and go on'],
  ['replace', 'Replace', 'Feed the edited record instead and go on'],
  ['resume', 'Resume', 'Go on with the record'],
  ['stop', 'Stop', 'End the run cleanly']
];
