import { Widget } from '@lumino/widgets';

import { pyRepr } from '../comm/tagged';
import { el } from '../widgets/format';
import type { ControlModel } from './model';
import { button } from './pauseBar';

/** Look at a running worker's state (operator, partition): `run.live_state(op, p)`. */
export class StateProbe extends Widget {
  constructor(model: ControlModel) {
    super();
    this._model = model;
    this.addClass('jp-icedtea-StateProbe');
    this._operator = input('jp-icedtea-probe-operator', 'operator');
    this._partition = input('jp-icedtea-probe-partition', 'partition');
    this._partition.type = 'number';
    this._partition.value = '0';
    const look = button('Look', 'jp-icedtea-probe-look', "The worker's state now (best while paused)");
    look.addEventListener('click', () => void this._look());
    this._out = el('pre', 'jp-icedtea-probe-state');
    const row = el('div', 'jp-icedtea-control-row');
    row.append(this._operator, this._partition, look);
    this.node.append(row, this._out);
  }

  private async _look(): Promise<void> {
    const state = await this._model.liveState(this._operator.value.trim(), Number(this._partition.value));
    this._out.textContent =
      state === null
        ? ''
        : Object.entries(state)
            .map(([name, value]) => `${name} = ${pyRepr(value)}`)
            .join('\n');
  }

  private _model: ControlModel;
  private _operator: HTMLInputElement;
  private _partition: HTMLInputElement;
  private _out: HTMLPreElement;
}

export function input(className: string, placeholder: string): HTMLInputElement {
  const node = el('input', `jp-icedtea-input ${className}`);
  node.placeholder = placeholder;
  node.setAttribute('aria-label', placeholder);
  return node;
}
