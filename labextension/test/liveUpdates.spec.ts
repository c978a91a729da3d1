import { Throttle } from '../src/comm/throttle';
import {
  hitTest,
  makeAxis,
  markerXs,
  offsetLabel,
  tickLabel,
  tickStep,
  visibleRange,
  xOf
} from '../src/timetravel/timelineGeometry';
import { scrollToRow, windowRange } from '../src/widgets/windowing';
import { interaction, ManualClock } from './timeTravelKernel';

describe('Throttle', () => {
  it('runs at once, then at most once per interval, keeping the last call', () => {
    const clock = new ManualClock();
    const fn = jest.fn();
    const throttle = new Throttle(fn, 250, clock);
    throttle.schedule();
    expect(fn).toHaveBeenCalledTimes(1);
    for (let i = 0; i < 100; i++) {
      clock.advance(1);
      throttle.schedule();
    }
    expect(fn).toHaveBeenCalledTimes(1);
    expect(throttle.pending).toBe(true);
    clock.advance(150); // 250 ms after the first call
    expect(fn).toHaveBeenCalledTimes(2);
    expect(throttle.pending).toBe(false);
    // A thousand events over 2 s: about eight calls, never more than one per 250 ms.
    fn.mockClear();
    const times: number[] = [];
    fn.mockImplementation(() => times.push(clock.now()));
    for (let i = 0; i < 1000; i++) {
      clock.advance(2);
      throttle.schedule();
    }
    clock.advance(300);
    expect(fn.mock.calls.length).toBeGreaterThanOrEqual(8);
    expect(fn.mock.calls.length).toBeLessThanOrEqual(9);
    for (let i = 1; i < times.length; i++) {
      expect(times[i] - times[i - 1]).toBeGreaterThanOrEqual(250);
    }
  });

  it('fires at once for a user action and drops a waiting call', () => {
    const clock = new ManualClock();
    const fn = jest.fn();
    const throttle = new Throttle(fn, 250, clock);
    throttle.schedule();
    throttle.schedule();
    expect(throttle.pending).toBe(true);
    throttle.fire();
    expect(fn).toHaveBeenCalledTimes(2);
    expect(throttle.pending).toBe(false);
    clock.advance(1000);
    expect(fn).toHaveBeenCalledTimes(2);
    throttle.schedule();
    throttle.dispose();
    throttle.schedule();
    clock.advance(1000);
    expect(fn).toHaveBeenCalledTimes(3);
  });
});

describe('windowRange', () => {
  it('renders only the rows in view plus the overscan', () => {
    // 1,000 rows of 24 px in a 168 px viewport.
    expect(windowRange(1000, 24, 0, 168, 4)).toEqual({ start: 0, end: 12, offset: 0, total: 24000 });
    const middle = windowRange(1000, 24, 12000, 168, 4);
    expect(middle).toEqual({ start: 496, end: 512, offset: 496 * 24, total: 24000 });
    // Scrolled to the end (and beyond): the last rows.
    const end = windowRange(1000, 24, 1e9, 168, 4);
    expect(end.end).toBe(1000);
    expect(end.end - end.start).toBeLessThanOrEqual(16);
    expect(windowRange(0, 24, 0, 168)).toEqual({ start: 0, end: 0, offset: 0, total: 0 });
    expect(windowRange(3, 24, 0, 168, 4)).toEqual({ start: 0, end: 3, offset: 0, total: 72 });
  });

  it('keeps the window small for 200 partitions whatever the scroll', () => {
    for (let top = 0; top <= 200 * 48; top += 97) {
      const w = windowRange(200, 48, top, 240, 6);
      expect(w.end - w.start).toBeLessThanOrEqual(6 + 6 + 7);
      expect(w.start).toBeLessThanOrEqual(Math.floor(Math.min(top, 200 * 48 - 240) / 48));
      expect(w.end * 48).toBeGreaterThanOrEqual(Math.min(top, 200 * 48 - 240) + 240);
    }
  });

  it('scrolls a row into view only when it is out of view', () => {
    expect(scrollToRow(10, 24, 0, 168)).toBe(24 * 11 - 168);
    expect(scrollToRow(2, 24, 0, 168)).toBe(0);
    expect(scrollToRow(2, 24, 240, 168)).toBe(48);
  });
});

describe('timeline geometry', () => {
  const interactions = [
    interaction(0, 'initial', 100),
    interaction(1, 'condition', 101),
    interaction(2, 'manual', 101.01),
    interaction(3, 'periodic', 110)
  ];

  it('maps the run from its start to its end over the width', () => {
    const axis = makeAxis(interactions, 99, 111, 1220);
    expect(axis).toEqual({ t0: 99, t1: 111, width: 1220 });
    expect(xOf(axis, 99)).toBe(10);
    expect(xOf(axis, 111)).toBe(1210);
    expect(makeAxis([], null, null, 100)).toEqual({ t0: 0, t1: 1, width: 100 });
    // A running run without an end: up to its last interaction.
    expect(makeAxis(interactions, 99, null, 100).t1).toBe(110);
  });

  it('finds the marker under the pointer, the later one when two overlap', () => {
    const axis = makeAxis(interactions, 99, 111, 1220);
    const xs = markerXs(axis, interactions);
    expect(hitTest(xs, xs[0] + 3)).toBe(0);
    expect(hitTest(xs, xs[1])).toBe(1); // the nearest
    expect(hitTest(xs, (xs[1] + xs[2]) / 2)).toBe(2); // I1 and I2 are 1 px apart: a tie goes to the later
    expect(hitTest(xs, (xs[2] + xs[3]) / 2)).toBe(-1);
    expect(visibleRange(xs, xs[1] - 1, xs[3] - 1)).toEqual([1, 3]);
  });

  it('picks readable tick steps', () => {
    expect(tickStep({ t0: 0, t1: 10, width: 720 })).toBe(1);
    expect(tickStep({ t0: 0, t1: 3600, width: 720 })).toBe(600);
  });

  it('labels ticks as precisely as their step', () => {
    expect(offsetLabel(33.5)).toBe('+34 s');
    expect(tickLabel(33.5, 0.5)).toBe('+33.5 s');
    expect(tickLabel(33.25, 0.05)).toBe('+33.25 s');
    expect(tickLabel(5, 1)).toBe('+5.0 s');
    expect(tickLabel(65.5, 0.5)).toBe('+1 min 05.5 s');
    expect(tickLabel(0.2, 0.1)).toBe('+0.2 s');
  });
});
