/** Where the timeline draws its markers, and which marker a pointer is on. */

import type { IInteraction } from '../comm/protocol';

/** Horizontal padding of the axis inside the drawing (px). */
export const AXIS_PAD = 10;

/** A time axis: `t0`..`t1` (epoch seconds) over `width` pixels. */
export interface IAxis {
  t0: number;
  t1: number;
  width: number;
}

/** The axis of a run: from its start (or first interaction) to its end (or now, or the last interaction). */
export function makeAxis(
  interactions: readonly IInteraction[],
  started: number | null,
  ended: number | null,
  width: number
): IAxis {
  const first = interactions.length ? interactions[0].time : null;
  let last = interactions.length ? interactions[interactions.length - 1].time : null;
  for (const i of interactions) {
    last = last === null || i.time > last ? i.time : last;
  }
  const t0 = Math.min(...[started, first].filter((t): t is number => t !== null && isFinite(t)), Infinity);
  const t1 = Math.max(...[ended, last].filter((t): t is number => t !== null && isFinite(t)), -Infinity);
  if (!isFinite(t0)) {
    return { t0: 0, t1: 1, width };
  }
  return { t0, t1: t1 > t0 ? t1 : t0 + 1, width };
}

/** The x of time `t`. */
export function xOf(axis: IAxis, t: number): number {
  const span = Math.max(1, axis.width - 2 * AXIS_PAD);
  return AXIS_PAD + ((t - axis.t0) / (axis.t1 - axis.t0)) * span;
}

/** The x of each interaction, in the list's order. */
export function markerXs(axis: IAxis, interactions: readonly IInteraction[]): Float64Array {
  const xs = new Float64Array(interactions.length);
  for (let i = 0; i < interactions.length; i++) {
    xs[i] = xOf(axis, interactions[i].time);
  }
  return xs;
}

/** Minimum px between the centres of two markers; closer ones are spread apart. */
export const MARKER_GAP = 11;
/** A cluster that would need more px than this to spread stays where it is (zoom in). */
export const MAX_SPREAD = 88;

/**
 * Where to draw markers whose times are at `xs` (sorted): markers closer than `gap`
 * (interactions at the same moment) are spread apart around their centre, so each is
 * seen and clickable. The spread positions are the nearest to the true ones with at
 * least `gap` between neighbours (least squares: an isotonic fit of `xs[i] - i·gap`,
 * by pooling adjacent violators). A cluster that would span more than `maxSpread` px
 * (a dense run at a low zoom) keeps its true positions. Unsorted `xs` are not moved.
 */
export function dodge(xs: Float64Array, gap = MARKER_GAP, maxSpread = MAX_SPREAD): Float64Array {
  const n = xs.length;
  const out = Float64Array.from(xs);
  for (let i = 1; i < n; i++) {
    if (xs[i] < xs[i - 1]) {
      return out;
    }
  }
  // Pool adjacent violators over y[i] = xs[i] - i·gap: blocks of [start, end) with their mean.
  const starts: number[] = [];
  const sums: number[] = [];
  const counts: number[] = [];
  for (let i = 0; i < n; i++) {
    starts.push(i);
    sums.push(xs[i] - i * gap);
    counts.push(1);
    while (sums.length > 1) {
      const k = sums.length - 1;
      if (sums[k - 1] / counts[k - 1] <= sums[k] / counts[k]) {
        break;
      }
      sums[k - 1] += sums[k];
      counts[k - 1] += counts[k];
      sums.pop();
      counts.pop();
      starts.pop();
    }
  }
  for (let b = 0; b < starts.length; b++) {
    const start = starts[b];
    const count = counts[b];
    if (count === 1 || (count - 1) * gap > maxSpread) {
      continue; // alone, or too dense to spread: true positions
    }
    const mean = sums[b] / count;
    for (let i = start; i < start + count; i++) {
      out[i] = mean + i * gap;
    }
  }
  // Blocks left in place may now be passed by a spread neighbour: keep the order.
  for (let i = 1; i < n; i++) {
    if (out[i] < out[i - 1]) {
      out[i] = out[i - 1];
    }
  }
  return out;
}

/** The position (in `xs`) of the marker nearest to `x` within `radius` px, or -1. */
export function hitTest(xs: Float64Array, x: number, radius = 6): number {
  let best = -1;
  let distance = radius;
  for (let i = 0; i < xs.length; i++) {
    const d = Math.abs(xs[i] - x);
    // Ties go to the later interaction (drawn on top).
    if (d <= distance) {
      best = i;
      distance = d;
    }
  }
  return best;
}

/** The markers between `left` and `right` px (inclusive), as a range of positions when `xs` is sorted. */
export function visibleRange(xs: Float64Array, left: number, right: number): [number, number] {
  let sorted = true;
  for (let i = 1; i < xs.length && sorted; i++) {
    sorted = xs[i] >= xs[i - 1];
  }
  if (!sorted) {
    return [0, xs.length];
  }
  return [lowerBound(xs, left), lowerBound(xs, right + 1e-9)];
}

function lowerBound(xs: Float64Array, value: number): number {
  let lo = 0;
  let hi = xs.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (xs[mid] < value) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo;
}

/** Tick spacing (seconds) that gives about one label per `minPx` pixels. */
export function tickStep(axis: IAxis, minPx = 70): number {
  const seconds = axis.t1 - axis.t0;
  const perPx = seconds / Math.max(1, axis.width - 2 * AXIS_PAD);
  const raw = perPx * minPx;
  const steps = [
    0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600
  ];
  return steps.find(s => s >= raw) ?? 3600 * Math.ceil(raw / 3600);
}

/** `"+3.2 s"`, `"+1 min 05 s"` after the start of the axis. */
export function offsetLabel(seconds: number): string {
  if (seconds < 0.001) {
    return '0 s';
  }
  if (seconds < 1) {
    return `+${Math.round(seconds * 1000)} ms`;
  }
  if (seconds < 60) {
    return `+${seconds < 10 ? seconds.toFixed(1) : Math.round(seconds)} s`;
  }
  const m = Math.floor(seconds / 60);
  return `+${m} min ${String(Math.round(seconds % 60)).padStart(2, '0')} s`;
}

/** A tick's label, as precise as the tick step needs: `"+33.5 s"` between ticks 0.5 s apart. */
export function tickLabel(seconds: number, step: number): string {
  if (step >= 1 || seconds < 0.001) {
    return offsetLabel(seconds);
  }
  const decimals = Math.min(3, Math.ceil(-Math.log10(step) - 1e-9));
  if (seconds < 60) {
    return `+${seconds.toFixed(decimals)} s`;
  }
  const m = Math.floor(seconds / 60);
  return `+${m} min ${(seconds % 60).toFixed(decimals).padStart(3 + decimals, '0')} s`;
}
