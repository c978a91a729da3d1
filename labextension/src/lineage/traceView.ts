import type { ILineageRecord } from '../comm/protocol';
import { pyRepr } from '../comm/tagged';
import { el, formatCount, plural, setText } from '../widgets/format';
import { pager } from '../widgets/pager';
import { Direction, IShownTrace, LINEAGE_PAGE, LineageModel, sameRecord } from './lineageModel';
import { IRecordAction, recordRow } from './recordRow';

/**
 * One trace: where it starts, its path operator by operator with the number of its
 * records at each (a click lists the records there), its notes, and its records a page
 * at a time. A backward trace's source records have "Forward" (their forward trace)
 * and "Jump here" (time travel to when θ received the record); `onJump` reveals the
 * debugger's sections. A backward trace has "Replay only these" (selective replay: the
 * cell's outputs on its source records only).
 */
export class TraceView {
  constructor(
    model: LineageModel,
    readonly direction: Direction,
    onJump: () => void
  ) {
    this._model = model;
    this._onJump = onJump;
    this.node = el('div', `jp-icedtea-lineage-trace jp-icedtea-lineage-${direction}`);
    this.node.dataset.direction = direction;
    this.node.append(this._title, this._path, this._summary, this._notes, this._records, this._pager);
    if (direction === 'back') {
      this._replayButton.type = 'button';
      this._replayButton.dataset.action = 'replay';
      this._replayButton.title =
        "Selective replay (t.replay()): re-run the cell's operators on only this trace's source records";
      this._replayButton.addEventListener('click', () => void this._model.replay());
      this.node.append(this._replayButton, this._replayed);
    }
  }

  readonly node: HTMLDivElement;

  render(): void {
    const shown = this.direction === 'back' ? this._model.back : this._model.forward;
    this.node.hidden = !shown;
    if (!shown) {
      return;
    }
    const { trace, page } = shown;
    this.node.dataset.trace = String(trace.trace);
    const from = pyRepr(trace.from.record, 120);
    setText(
      this._title,
      this.direction === 'back'
        ? `Back from ${from} (${trace.from.operator}, partition ${trace.from.partition})`
        : `Forward from ${from} (${trace.from.operator}, partition ${trace.from.partition})`
    );
    this._title.title = trace.call;
    this._renderPath(shown);
    setText(this._summary, this._summaryText(shown));
    this._notes.replaceChildren(...trace.notes.map(note => el('li', 'jp-icedtea-lineage-note', note)));
    this._notes.hidden = trace.notes.length === 0;
    this._renderReplay();
    const ends = page.operator === null;
    this._records.dataset.operator = page.operator ?? '';
    this._records.replaceChildren(...page.rows.map(record => this._row(record, ends)));
    this._pager.replaceWith(
      (this._pager = pager(
        page,
        LINEAGE_PAGE,
        start => void this._model.showRecords(this.direction, start, page.operator)
      ))
    );
  }

  private _renderReplay(): void {
    const replayed = this.direction === 'back' ? this._model.replayed : null;
    this._replayed.hidden = !replayed;
    if (!replayed) {
      this._replayed.replaceChildren();
      return;
    }
    const shown = replayed.outputs.length < replayed.total ? ` (the first ${replayed.outputs.length})` : '';
    this._replayed.title = replayed.call;
    this._replayed.replaceChildren(
      el(
        'div',
        'jp-icedtea-lineage-summary',
        `Replayed on these sources: ${plural(replayed.total, 'output row')}${shown}`
      ),
      ...replayed.outputs.map(output => el('div', 'jp-icedtea-lineage-value', pyRepr(output, 120)))
    );
  }

  private _renderPath({ trace, page }: IShownTrace): void {
    // Back: from the output row to the sources; forward: from the source to the outputs.
    const steps = this.direction === 'back' ? [...trace.operators].reverse() : trace.operators;
    const nodes: HTMLElement[] = [];
    steps.forEach((step, i) => {
      if (i > 0) {
        nodes.push(el('span', 'jp-icedtea-lineage-arrow', this.direction === 'back' ? '←' : '→'));
      }
      const button = el('button', 'jp-icedtea-lineage-step');
      button.type = 'button';
      button.dataset.operator = step.operator;
      button.dataset.count = String(step.count);
      button.append(
        el('span', 'jp-icedtea-lineage-op', step.operator),
        el('span', 'jp-icedtea-lineage-count', formatCount(step.count))
      );
      button.title = `${plural(step.count, 'record')} of the trace at ${step.operator}'s output: click to list them`;
      button.classList.toggle('jp-mod-selected', page.operator === step.operator);
      button.addEventListener('click', () => void this._model.showRecords(this.direction, 0, step.operator));
      nodes.push(button);
    });
    this._path.replaceChildren(...nodes);
  }

  private _summaryText({ trace, page }: IShownTrace): string {
    if (page.operator !== null) {
      return `${plural(page.total, 'record')} at ${page.operator} (show the trace's ends: click its last step)`;
    }
    if (this.direction === 'back') {
      return `${plural(trace.total, 'source record')} (${trace.engine})`;
    }
    return trace.total === 0
      ? 'It went into no output row: filtered out on the way.'
      : `It went into ${plural(trace.total, 'output row')} (${trace.engine})`;
  }

  private _row(record: ILineageRecord, ends: boolean): HTMLElement {
    const actions: IRecordAction[] = [];
    if (this.direction === 'back' && ends) {
      actions.push({
        label: 'Forward',
        action: 'trace-forward',
        title: 'The output rows this source record went into',
        run: () => void this._model.traceForward(record)
      });
    }
    actions.push({
      label: 'Jump here',
      action: 'jump',
      title: 'Time travel: the debugger just before θ receives the input this record is linked with (dbg.jump_to)',
      run: () => {
        this._onJump();
        void this._model.jumpTo(this.direction, record);
      }
    });
    const row = recordRow(record, actions);
    row.classList.toggle('jp-mod-selected', sameRecord(this._model.jumped, record));
    row.classList.toggle(
      'jp-icedtea-lineage-forwarded',
      this.direction === 'back' && sameRecord(this._model.forward?.trace.from ?? null, record)
    );
    return row;
  }

  private _model: LineageModel;
  private _onJump: () => void;
  private _title = el('div', 'jp-icedtea-lineage-heading');
  private _path = el('div', 'jp-icedtea-lineage-path');
  private _summary = el('div', 'jp-icedtea-lineage-summary jp-icedtea-muted');
  private _notes = el('ul', 'jp-icedtea-lineage-notes');
  private _records = el('div', 'jp-icedtea-lineage-rows');
  private _pager: HTMLElement = el('div', 'jp-icedtea-pager');
  private _replayButton = el('button', 'jp-icedtea-lineage-replay', 'Replay only these');
  private _replayed = el('div', 'jp-icedtea-lineage-replayed');
}
