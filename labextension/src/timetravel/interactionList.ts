import { el, setText } from '../widgets/format';
import type { IInteraction } from '../comm/protocol';
import { pyRepr } from '../comm/tagged';
import { offsetLabel } from './timelineGeometry';
import type { TimeTravelModel } from './timeTravel';
import { triggerGlyph } from './triggers';
import { VirtualList } from '../widgets/virtualList';

const ROW_HEIGHT = 24;

/**
 * Every interaction of the run as a windowed list (a thousand rows stay cheap): index,
 * trigger, time after the start, the record that met a condition. A click does what a
 * click on the timeline does. Not a widget: `TimelineView` holds it.
 */
export class InteractionList {
  constructor(private readonly _model: TimeTravelModel) {
    this._list = new VirtualList<IInteraction>({
      rowHeight: ROW_HEIGHT,
      maxHeight: 168,
      className: 'jp-icedtea-interactions',
      role: 'listbox',
      label: 'Interactions',
      create: () => this._create(),
      update: (row, interaction) => this._update(row, interaction)
    });
    this.node = this._list.node;
    this.node.addEventListener('click', this._onClick);
    this.node.addEventListener('keydown', this._onKey);
  }

  readonly node: HTMLElement;

  /** The virtual list (the benchmark counts its rows). */
  get list(): VirtualList<IInteraction> {
    return this._list;
  }

  render(): void {
    const timeline = this._model.timeline;
    const summary = this._model.runs.selected;
    const first = timeline.interactions[0];
    this._t0 = summary && summary.id === timeline.runId ? summary.started : (first?.time ?? 0);
    this._selected = timeline.selectedIndex;
    this._debugAt = this._model.debug.view?.index ?? null;
    this._running = timeline.running;
    this._list.setItems(timeline.interactions);
    if (this._selected !== null && this._selected !== this._revealed) {
      this._revealed = this._selected;
      const at = timeline.interactions.findIndex(i => i.index === this._selected);
      if (at >= 0) {
        this._list.reveal(at);
      }
    }
  }

  dispose(): void {
    this._list.dispose();
  }

  private _create(): HTMLElement {
    const row = el('div', 'jp-icedtea-interaction');
    row.setAttribute('role', 'option');
    row.tabIndex = -1;
    row.append(
      el('span', 'jp-icedtea-interaction-glyph'),
      el('span', 'jp-icedtea-interaction-index'),
      el('span', 'jp-icedtea-interaction-trigger jp-icedtea-muted'),
      el('span', 'jp-icedtea-interaction-time jp-icedtea-muted'),
      el('span', 'jp-icedtea-interaction-record'),
      debugMark()
    );
    return row;
  }

  private _update(row: HTMLElement, interaction: IInteraction): void {
    const [glyph, index, trigger, time, record, debug] = Array.from(row.children) as HTMLElement[];
    const glyphKey = `${interaction.trigger}|${interaction.complete}`;
    if (glyph.dataset.key !== glyphKey) {
      glyph.dataset.key = glyphKey;
      glyph.replaceChildren(triggerGlyph(interaction.trigger, !interaction.complete));
    }
    row.dataset.index = String(interaction.index);
    row.dataset.trigger = interaction.trigger;
    row.dataset.complete = String(interaction.complete);
    const selected = interaction.index === this._selected;
    row.classList.toggle('jp-mod-selected', selected);
    row.setAttribute('aria-selected', String(selected));
    setText(index, `I${interaction.index}`);
    setText(trigger, interaction.trigger);
    setText(time, offsetLabel(interaction.time - this._t0));
    const text = interaction.record !== null && interaction.record !== undefined ? pyRepr(interaction.record, 100) : '';
    setText(record, text);
    const at = interaction.index === this._debugAt;
    debug.hidden = !at;
    row.classList.toggle('jp-icedtea-mod-debug', at);
    row.title =
      `I${interaction.index}: ${interaction.trigger}${interaction.complete ? '' : ' (snapshot incomplete)'}` +
      (text ? `\nrecord: ${text}` : '') +
      (this._running ? '\nClick to show its snapshot' : '\nClick to jump there (debug.jump)');
  }

  private _index(target: EventTarget | null): number | null {
    const row = (target as HTMLElement | null)?.closest<HTMLElement>('.jp-icedtea-interaction');
    return row?.dataset.index !== undefined ? Number(row.dataset.index) : null;
  }

  private _onClick = (event: MouseEvent): void => {
    const index = this._index(event.target);
    if (index !== null) {
      void this._model.timeline.activate(index);
    }
  };

  private _onKey = (event: KeyboardEvent): void => {
    if (event.key === 'Enter' || event.key === ' ') {
      const index = this._index(event.target);
      if (index !== null) {
        event.preventDefault();
        void this._model.timeline.activate(index);
      }
    }
  };

  private _list: VirtualList<IInteraction>;
  private _t0 = 0;
  private _selected: number | null = null;
  private _revealed: number | null = null;
  private _debugAt: number | null = null;
  private _running = false;
}

/** "◀ debugger" beside the interaction the debugger is at (narrow: "◀", the word in its tooltip). */
function debugMark(): HTMLElement {
  const mark = el('span', 'jp-icedtea-interaction-debug', '◀');
  mark.append(el('span', 'jp-icedtea-interaction-debug-word', ' debugger'));
  mark.title = 'The debugger is at this interaction';
  mark.hidden = true;
  return mark;
}
