import { el, setChildren } from '../widgets/format';
import { ModelView } from '../widgets/modelView';
import type { IBreakpointItem } from '../comm/protocol';
import type { ControlModel } from './model';
import { button } from './pauseBar';
import { input } from './stateProbe';
import { breakpointText } from './texts';

/** The run's breakpoints (conditional and global), a form to add one, ✕ to remove one. */
export class BreakpointList extends ModelView<ControlModel> {
  constructor(model: ControlModel) {
    super(model);
    this.addClass('jp-icedtea-BreakpointList');
    this._list = el('ul', 'jp-icedtea-breakpoints');
    this._operator = input('jp-icedtea-bp-operator', 'operator');
    this._when = input('jp-icedtea-bp-when', 'condition over row, e.g. row.amount > 10_000');
    const add = button('Add', 'jp-icedtea-bp-add', 'Pause when the operator is about to take a matching record');
    add.addEventListener('click', () => void this._add());
    const form = el('div', 'jp-icedtea-control-row');
    form.append(this._operator, this._when, add);
    this.node.append(el('div', 'jp-icedtea-subtitle', 'Breakpoints'), this._list, form);
    this._follow();
  }

  private async _add(): Promise<void> {
    await this._model.addBreakpoint(this._operator.value.trim(), this._when.value.trim());
  }

  protected _render(): void {
    const items = this._model.view?.breakpoints ?? [];
    setChildren(this._list, items.length ? items.map(bp => this._row(bp)) : [el('li', 'jp-icedtea-muted', 'None')]);
  }

  private _row(bp: IBreakpointItem): HTMLLIElement {
    const row = el('li', 'jp-icedtea-breakpoint');
    row.dataset.id = String(bp.id);
    row.append(el('span', 'jp-icedtea-bp-text', breakpointText(bp)));
    if (bp.armed) {
      const remove = button('✕', 'jp-icedtea-bp-remove', `Remove breakpoint ${bp.id}`);
      remove.addEventListener('click', () => void this._model.removeBreakpoint(bp.id));
      row.append(remove);
    }
    return row;
  }

  private _list: HTMLUListElement;
  private _operator: HTMLInputElement;
  private _when: HTMLInputElement;
}
