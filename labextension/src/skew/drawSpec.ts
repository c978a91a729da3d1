import { View } from 'vega';
import embed, { Result } from 'vega-embed';
import { compile, TopLevelSpec } from 'vega-lite';

import { nextFrame } from '../widgets/frameQueue';

/** A step's cost since `start`, for profiles (`bench/skew_live_ui.py` observes these
 * measures); none is kept in the page's timeline. */
export function measure(name: string, start: number): void {
  performance.measure(name, { start });
  performance.clearMeasures(name);
}

/** A Vega view whose first run waits for the next frame: vega-embed parses the spec and
 * builds the view in one task, the dataflow's first run and render come in another. */
class ViewFirstRunLater extends View {
  async runAsync(...args: Parameters<View['runAsync']>): Promise<View> {
    if (!this._ran) {
      this._ran = true;
      await nextFrame();
    }
    return super.runAsync(...args);
  }

  private _ran = false;
}

/** How a chart is drawn: `renderer`, `width` (px, the plot's), and `name` for the
 * steps' measures. */
export interface IDrawOptions {
  renderer: 'svg' | 'canvas';
  width: number;
  name: string;
}

/**
 * An Altair (Vega-Lite) spec drawn with vega-embed into a new element, in three steps,
 * each in a frame of its own (`nextFrame`): Vega-Lite compiled to Vega, then Vega's
 * parse, then the first run and render.
 * The first chart of a page took 106-135 ms in one task (Vega's code run cold), a frame
 * over 100 ms. The element is not in the page while it is drawn (the chart shown stays
 * until the caller swaps it in). Null when `wanted()` turned false between two steps
 * (a newer draw began): nothing is left behind.
 */
export async function drawSpec(
  spec: unknown,
  options: IDrawOptions,
  wanted: () => boolean
): Promise<{ element: HTMLDivElement; result: Result } | null> {
  let start = performance.now();
  const compiled = compile(spec as TopLevelSpec).spec;
  measure(`icedtea-skew-compile-${options.name}`, start);
  await nextFrame();
  if (!wanted()) {
    return null;
  }
  start = performance.now();
  const element = document.createElement('div');
  const result = await embed(element, compiled, {
    mode: 'vega',
    hover: false, // as vega-embed does for a Vega-Lite spec
    actions: false,
    renderer: options.renderer,
    width: options.width,
    viewClass: ViewFirstRunLater
  });
  if (!wanted()) {
    result.finalize();
    return null;
  }
  measure(`icedtea-skew-draw-${options.name}`, start);
  return { element, result };
}
