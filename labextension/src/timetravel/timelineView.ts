import { Widget } from '@lumino/widgets';

import { el, plural, setText } from '../widgets/format';
import { RedrawWhenShown } from '../widgets/redrawWhenShown';
import { InteractionList } from './interactionList';
import type { IInteraction } from '../comm/protocol';
import { pyRepr } from '../comm/tagged';
import {
  AXIS_PAD,
  dodge,
  hitTest,
  IAxis,
  makeAxis,
  markerXs,
  offsetLabel,
  tickLabel,
  tickStep,
  visibleRange,
  xOf
} from './timelineGeometry';
import type { TimeTravelModel } from './timeTravel';
import { resolveColor, triggerGlyph, triggerStyle, TRIGGER_STYLES } from './triggers';

const HEIGHT = 56;
const AXIS_Y = 34;
const ZOOMS = [1, 2, 4, 8, 16, 32, 64];

/**
 * The interaction timeline: a time axis drawn on one canvas with every interaction
 * (shape and colour by trigger, a tooltip on hover), clickable (the debugger jumps
 * there), zoomable and scrollable; `Interact now` while the run records; and the
 * windowed list of all interactions below it.
 */
export class TimelineView extends Widget {
  constructor(model: TimeTravelModel) {
    super();
    this._model = model;
    this.addClass('jp-icedtea-TimelineView');
    this._interact = el('button', 'jp-icedtea-button jp-icedtea-interact', 'Interact now');
    this._interact.type = 'button';
    this._count = el('span', 'jp-icedtea-muted jp-icedtea-timeline-count');
    this._follow = el('button', 'jp-icedtea-link jp-icedtea-follow', 'follow newest');
    this._follow.type = 'button';
    this._follow.title = 'Show the newest interaction again, and the ones to come';
    const zoomOut = zoomButton('−', 'Zoom out', -1);
    const zoomIn = zoomButton('+', 'Zoom in', 1);
    this._zoomLabel = el('span', 'jp-icedtea-muted jp-icedtea-zoom-label');
    const toolbar = el('div', 'jp-icedtea-timeline-toolbar');
    const zoom = el('span', 'jp-icedtea-zoom-group');
    zoom.append(zoomOut, this._zoomLabel, zoomIn);
    toolbar.append(this._interact, this._count, this._follow, el('span', 'jp-icedtea-spacer'), zoom);

    this._scroller = el('div', 'jp-icedtea-timeline-scroll');
    this._spacer = el('div', 'jp-icedtea-timeline-spacer');
    this._canvas = el('canvas', 'jp-icedtea-timeline-canvas');
    this._canvas.tabIndex = 0;
    this._canvas.setAttribute('role', 'img');
    this._spacer.append(this._canvas);
    this._scroller.append(this._spacer);
    this._tooltip = el('div', 'jp-icedtea-timeline-tooltip');
    this._tooltip.hidden = true;
    const frame = el('div', 'jp-icedtea-timeline-frame');
    frame.append(this._scroller, this._tooltip);
    this._error = el('div', 'jp-icedtea-inline-error');
    this._error.setAttribute('role', 'alert');
    this._list = new InteractionList(model);

    this.node.append(toolbar, frame, this._error, legend(), this._list.node);

    this._interact.addEventListener('click', () => void model.timeline.interact());
    this._follow.addEventListener('click', () => model.timeline.follow());
    toolbar.addEventListener('click', event => {
      const step = (event.target as HTMLElement).closest<HTMLElement>('[data-zoom]')?.dataset.zoom;
      if (step) {
        this._setZoom(this._zoom + Number(step));
      }
    });
    this._scroller.addEventListener('scroll', this._onScroll, { passive: true });
    this._canvas.addEventListener('mousemove', this._onMove);
    this._canvas.addEventListener('mouseleave', () => (this._tooltip.hidden = true));
    this._canvas.addEventListener('click', this._onClick);
    this._canvas.addEventListener('keydown', this._onKey);
    model.timeline.changed.connect(this._onChanged, this);
    model.debug.changed.connect(this._onChanged, this);
    model.runs.changed.connect(this._onChanged, this);
    this._onChanged();
  }

  /** The timeline's redraws, skipped while its section is collapsed. */
  private readonly _redraw = new RedrawWhenShown(this, () => this._render());

  /** Milliseconds the last full redraw of the canvas took (the benchmark reads it). */
  get lastDrawMs(): number {
    return this._drawMs;
  }

  dispose(): void {
    if (this.isDisposed) {
      return;
    }
    this._model.timeline.changed.disconnect(this._onChanged, this);
    this._model.debug.changed.disconnect(this._onChanged, this);
    this._model.runs.changed.disconnect(this._onChanged, this);
    this._list.dispose();
    super.dispose();
  }

  protected onAfterShow(): void {
    if (this._redraw.stale) {
      this._redraw.shown();
    } else {
      this._draw();
    }
  }

  protected onResize(): void {
    this._draw();
  }

  private _onChanged(): void {
    const { timeline, runs } = this._model;
    const visible = timeline.runId !== null && runs.state === 'ready';
    this.setHidden(!visible);
    if (visible) {
      this._redraw.request();
    }
  }

  /** The toolbar, the list and the canvas, from the latest timeline. */
  private _render(): void {
    const timeline = this._model.timeline;
    const n = timeline.interactions.length;
    this._interact.disabled = !timeline.running || timeline.interacting;
    this._interact.hidden = false;
    this._interact.title = timeline.running
      ? 'Take a tuple-consistent snapshot of G(θ) now (run.interact())'
      : 'The run has ended: interactions are taken while a run records. Click one to jump to it.';
    setText(this._interact, timeline.interacting ? 'Interacting…' : 'Interact now');
    setText(this._count, timeline.loading && !n ? 'loading…' : plural(n, 'interaction'));
    this._follow.hidden = timeline.following || !timeline.running;
    setText(this._error, timeline.error ?? '');
    this._error.hidden = !timeline.error;
    this._canvas.setAttribute(
      'aria-label',
      `Timeline of ${plural(n, 'interaction')}; selected: I${timeline.selectedIndex ?? '–'}`
    );
    this._list.render();
    this._draw();
  }

  private _setZoom(level: number): void {
    const zoom = Math.max(0, Math.min(ZOOMS.length - 1, level));
    if (zoom === this._zoom) {
      return;
    }
    // Keep the middle of the view where it is.
    const view = this._scroller.clientWidth;
    const middle = (this._scroller.scrollLeft + view / 2) / Math.max(1, this._contentWidth());
    this._zoom = zoom;
    this._draw();
    this._scroller.scrollLeft = middle * this._contentWidth() - view / 2;
    this._draw();
  }

  private _contentWidth(): number {
    return Math.max(1, this._scroller.clientWidth) * ZOOMS[this._zoom];
  }

  /**
   * The axis, the markers' x (interactions at the same moment spread apart) and their
   * true x on the axis, for drawing and hit tests.
   */
  private _geometry(): { axis: IAxis; xs: Float64Array; at: Float64Array; interactions: readonly IInteraction[] } {
    const { timeline, runs } = this._model;
    const interactions = timeline.interactions;
    const summary = runs.selected;
    const width = this._contentWidth();
    const started = summary && summary.id === timeline.runId ? summary.started : null;
    const ended =
      summary && summary.id === timeline.runId
        ? (summary.ended ?? (summary.status === 'running' ? Date.now() / 1000 : null))
        : null;
    const key = `${interactions.length}|${interactions[interactions.length - 1]?.time}|${started}|${ended}|${width}`;
    if (key !== this._layoutKey || interactions !== this._layoutList) {
      const axis = makeAxis(interactions, started, ended, width);
      const at = markerXs(axis, interactions);
      this._layoutCache = { axis, xs: dodge(at), at, interactions };
      this._layoutKey = key;
      this._layoutList = interactions;
    }
    return this._layoutCache!;
  }

  private _draw(): void {
    if (this.isHidden || !this.isVisible) {
      return;
    }
    const t = performance.now();
    const viewWidth = this._scroller.clientWidth;
    if (viewWidth <= 0) {
      return;
    }
    const width = this._contentWidth();
    setText(this._zoomLabel, `${ZOOMS[this._zoom]}×`);
    this._spacer.style.width = `${width}px`;
    const ratio = window.devicePixelRatio || 1;
    const canvas = this._canvas;
    if (canvas.width !== Math.round(viewWidth * ratio) || canvas.height !== Math.round(HEIGHT * ratio)) {
      canvas.width = Math.round(viewWidth * ratio);
      canvas.height = Math.round(HEIGHT * ratio);
      canvas.style.width = `${viewWidth}px`;
      canvas.style.height = `${HEIGHT}px`;
    }
    const ctx = canvas.getContext('2d');
    if (!ctx) {
      return;
    }
    const left = this._scroller.scrollLeft;
    const { axis, xs, at, interactions } = this._geometry();
    ctx.setTransform(ratio, 0, 0, ratio, -left * ratio, 0);
    ctx.clearRect(left, 0, viewWidth, HEIGHT);
    const colors = this._colors();
    // The axis and its ticks.
    ctx.strokeStyle = colors.axis;
    ctx.lineWidth = 1;
    ctx.beginPath();
    ctx.moveTo(Math.max(left, AXIS_PAD), AXIS_Y + 0.5);
    ctx.lineTo(Math.min(left + viewWidth, width - AXIS_PAD), AXIS_Y + 0.5);
    ctx.stroke();
    ctx.fillStyle = colors.text;
    ctx.font = colors.font;
    ctx.textBaseline = 'top';
    const step = tickStep(axis);
    const firstTick =
      Math.ceil(Math.max(0, ((left - AXIS_PAD) / (width - 2 * AXIS_PAD)) * (axis.t1 - axis.t0)) / step) * step;
    for (let s = firstTick; axis.t0 + s <= axis.t1 + 1e-9; s += step) {
      const x = xOf(axis, axis.t0 + s);
      if (x > left + viewWidth + 40) {
        break;
      }
      ctx.fillRect(Math.round(x), AXIS_Y, 1, 4);
      ctx.fillText(tickLabel(s, step), Math.round(x) + 2, AXIS_Y + 7);
    }
    // The markers in view.
    const [from, to] = visibleRange(xs, left - 8, left + viewWidth + 8);
    const selected = this._model.timeline.selectedIndex;
    const debugAt = this._model.debug.view?.index ?? null;
    ctx.strokeStyle = colors.axis;
    ctx.lineWidth = 1;
    for (let i = from; i < to; i++) {
      // A marker moved aside from its moment: a leader to its time on the axis.
      if (Math.abs(xs[i] - at[i]) > 0.5) {
        ctx.beginPath();
        ctx.moveTo(at[i], AXIS_Y);
        ctx.lineTo(xs[i], AXIS_Y - 4);
        ctx.stroke();
      }
    }
    for (let i = from; i < to; i++) {
      const interaction = interactions[i];
      drawMarker(ctx, xs[i], AXIS_Y - 9, interaction, colors.trigger(interaction.trigger));
    }
    // The selected interaction and the debugger's position, on top.
    const xOfIndex = (index: number | null): number | null => {
      const position = index === null ? -1 : this._position(index);
      return position < 0 ? null : xs[position];
    };
    const ring = (x: number | null, color: string) => {
      if (x !== null) {
        ctx.strokeStyle = color;
        ctx.lineWidth = 2;
        ctx.beginPath();
        ctx.arc(x, AXIS_Y - 9, 7, 0, Math.PI * 2);
        ctx.stroke();
      }
    };
    const label = (x: number, color: string, text: string) => {
      const w = ctx.measureText(text).width;
      ctx.fillStyle = color;
      ctx.fillText(text, Math.max(left + 1, Math.min(x - w / 2, left + viewWidth - w - 1)), 2);
    };
    const selectedX = xOfIndex(selected);
    const debugX = debugAt !== null && debugAt !== selected ? xOfIndex(debugAt) : null;
    ring(selectedX, colors.selected);
    ring(debugX, colors.debug);
    const labels = [
      { x: selectedX, color: colors.selected, text: `I${selected}` },
      { x: debugX, color: colors.debug, text: `dbg I${debugAt}` }
    ].filter((l): l is { x: number; color: string; text: string } => l.x !== null);
    if (labels.length === 2 && Math.abs(labels[0].x - labels[1].x) < 48) {
      // Two labels that would overlap: side by side around their middle, in x order.
      labels.sort((a, b) => a.x - b.x);
      const middle = (labels[0].x + labels[1].x) / 2;
      const [a, b] = labels.map(l => ctx.measureText(l.text).width);
      label(middle - 3 - a / 2, labels[0].color, labels[0].text);
      label(middle + 3 + b / 2, labels[1].color, labels[1].text);
    } else {
      labels.forEach(l => label(l.x, l.color, l.text));
    }
    this._drawMs = performance.now() - t;
    this.node.dataset.drawMs = this._drawMs.toFixed(2);
  }

  private _colors(): {
    axis: string;
    text: string;
    selected: string;
    debug: string;
    font: string;
    trigger: (t: string) => string;
  } {
    const theme = document.body.dataset.jpThemeName ?? '';
    if (!this._colorCache || this._colorTheme !== theme) {
      this._colorTheme = theme;
      const node = this.node;
      const cache = new Map<string, string>();
      this._colorCache = {
        axis: resolveColor('var(--jp-border-color1, #bdbdbd)', node),
        text: resolveColor('var(--jp-ui-font-color2, #616161)', node),
        selected: resolveColor('var(--jp-brand-color0, #0d47a1)', node),
        debug: resolveColor('var(--jp-error-color1, #d32f2f)', node),
        font: `10px ${getComputedStyle(node).fontFamily || 'sans-serif'}`,
        trigger: (trigger: string) => {
          let color = cache.get(trigger);
          if (!color) {
            color = resolveColor(triggerStyle(trigger).color, node);
            cache.set(trigger, color);
          }
          return color;
        }
      };
    }
    return this._colorCache;
  }

  /** The position in the list of interaction `index`. */
  private _position(index: number): number {
    const list = this._model.timeline.interactions;
    if (list[index]?.index === index) {
      return index;
    }
    return list.findIndex(i => i.index === index);
  }

  private _hit(event: MouseEvent): IInteraction | null {
    const rect = this._canvas.getBoundingClientRect();
    const x = event.clientX - rect.left + this._scroller.scrollLeft;
    const { xs, interactions } = this._geometry();
    const at = hitTest(xs, x, 7);
    return at >= 0 ? interactions[at] : null;
  }

  private _onMove = (event: MouseEvent): void => {
    const hit = this._hit(event);
    if (!hit) {
      this._tooltip.hidden = true;
      this._canvas.style.cursor = '';
      return;
    }
    this._canvas.style.cursor = 'pointer';
    const { axis } = this._geometry();
    setText(this._tooltip, describeInteraction(hit, axis.t0, this._model.timeline.running));
    this._tooltip.hidden = false;
    const frame = this._tooltip.parentElement!.getBoundingClientRect();
    this._tooltip.style.left = `${Math.max(0, Math.min(event.clientX - frame.left + 8, frame.width - 220))}px`;
  };

  private _onClick = (event: MouseEvent): void => {
    const hit = this._hit(event);
    if (hit) {
      void this._model.timeline.activate(hit.index);
    }
  };

  private _onKey = (event: KeyboardEvent): void => {
    const timeline = this._model.timeline;
    const list = timeline.interactions;
    const at = this._position(timeline.selectedIndex ?? -1);
    let next = -1;
    if (event.key === 'ArrowLeft') {
      next = Math.max(0, at - 1);
    } else if (event.key === 'ArrowRight') {
      next = Math.min(list.length - 1, at + 1);
    } else if (event.key === 'Home') {
      next = 0;
    } else if (event.key === 'End') {
      next = list.length - 1;
    }
    if (next >= 0 && list[next]) {
      event.preventDefault();
      void timeline.activate(list[next].index);
    }
  };

  private _onScroll = (): void => {
    if (this._frame === null) {
      this._frame = requestAnimationFrame(() => {
        this._frame = null;
        this._draw();
      });
    }
  };

  private _model: TimeTravelModel;
  private _interact: HTMLButtonElement;
  private _count: HTMLElement;
  private _follow: HTMLButtonElement;
  private _zoomLabel: HTMLElement;
  private _scroller: HTMLDivElement;
  private _spacer: HTMLDivElement;
  private _canvas: HTMLCanvasElement;
  private _tooltip: HTMLDivElement;
  private _error: HTMLElement;
  private _list: InteractionList;
  private _zoom = 0;
  private _frame: number | null = null;
  private _drawMs = 0;
  private _layoutKey = '';
  private _layoutList: readonly IInteraction[] | null = null;
  private _layoutCache: {
    axis: IAxis;
    xs: Float64Array;
    at: Float64Array;
    interactions: readonly IInteraction[];
  } | null = null;
  private _colorCache: ReturnType<TimelineView['_colors']> | null = null;
  private _colorTheme = '';
}

/** The tooltip (and list title) of an interaction. */
export function describeInteraction(interaction: IInteraction, t0: number, running: boolean): string {
  const parts = [
    `I${interaction.index} · ${triggerStyle(interaction.trigger).label}`,
    offsetLabel(interaction.time - t0)
  ];
  if (!interaction.complete) {
    parts.push('snapshot incomplete');
  } else if (interaction.latency !== null && interaction.latency !== undefined) {
    parts.push(`snapshot in ${Math.round(interaction.latency * 1000)} ms`);
  }
  if (interaction.record !== null && interaction.record !== undefined) {
    parts.push(`record: ${pyRepr(interaction.record, 120)}`);
  }
  parts.push(running ? 'click to show its snapshot' : 'click to jump there');
  return parts.join('\n');
}

function drawMarker(
  ctx: CanvasRenderingContext2D,
  x: number,
  y: number,
  interaction: IInteraction,
  color: string
): void {
  const shape = triggerStyle(interaction.trigger).shape;
  ctx.beginPath();
  switch (shape) {
    case 'circle':
      ctx.arc(x, y, 4.5, 0, Math.PI * 2);
      break;
    case 'square':
      ctx.rect(x - 4, y - 4, 8, 8);
      break;
    case 'bar':
      ctx.rect(x - 1.5, y - 6, 3, 12);
      break;
    case 'triangle':
      ctx.moveTo(x, y - 5.5);
      ctx.lineTo(x + 5, y + 4);
      ctx.lineTo(x - 5, y + 4);
      ctx.closePath();
      break;
    default:
      ctx.moveTo(x, y - 5);
      ctx.lineTo(x + 5, y);
      ctx.lineTo(x, y + 5);
      ctx.lineTo(x - 5, y);
      ctx.closePath();
  }
  if (interaction.complete) {
    ctx.fillStyle = color;
    ctx.fill();
  } else {
    ctx.strokeStyle = color;
    ctx.lineWidth = 1.5;
    ctx.stroke();
  }
}

function zoomButton(text: string, title: string, step: number): HTMLButtonElement {
  const button = el('button', 'jp-icedtea-button jp-icedtea-zoom', text);
  button.type = 'button';
  button.title = title;
  button.dataset.zoom = String(step);
  return button;
}

function legend(): HTMLElement {
  const node = el('div', 'jp-icedtea-legend jp-icedtea-trigger-legend');
  for (const [trigger, style] of Object.entries(TRIGGER_STYLES)) {
    const item = el('span', 'jp-icedtea-legend-item');
    item.title = style.label;
    item.append(triggerGlyph(trigger), ` ${trigger}`);
    node.append(item);
  }
  const hollow = el('span', 'jp-icedtea-legend-item');
  hollow.append(triggerGlyph('manual', true), ' incomplete');
  node.append(hollow);
  return node;
}
