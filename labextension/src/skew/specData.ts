/** An Altair spec's one named dataset apart from the rest (its `shape`), or null when
 * it has another form: two specs of one shape differ only in their numbers. */
export function splitData(spec: unknown): { shape: string; name: string; values: unknown[] } | null {
  if (spec === null || typeof spec !== 'object') {
    return null;
  }
  const { datasets, data, ...rest } = spec as {
    datasets?: { [name: string]: unknown[] };
    data?: { name?: string };
  };
  const names = Object.keys(datasets ?? {});
  if (datasets === undefined || names.length !== 1 || data?.name !== names[0]) {
    return null;
  }
  return { shape: JSON.stringify(rest), name: names[0], values: datasets[names[0]] };
}

/** The skew report's charts, by their spec's field: the partitions' bars (`spec`), the
 * `heatmap` and the load over time (`timeline`). */
export type ChartKind = 'spec' | 'heatmap' | 'timeline';

/** A heat map of more cells is drawn on a canvas: as SVG, each live update of its
 * 2,400 cells at 200 partitions x 12 operators changed thousands of DOM attributes. */
export const CANVAS_CELLS = 400;

/** How a chart is drawn: SVG (its marks carry aria labels a screen reader reads), but a
 * heat map of more than `CANVAS_CELLS` cells on a canvas (the bars and the load over
 * time, a few lines, stay SVG). */
export function chartRenderer(kind: ChartKind, spec: unknown): 'svg' | 'canvas' {
  const cells = kind === 'heatmap' ? (splitData(spec)?.values.length ?? 0) : 0;
  return cells > CANVAS_CELLS ? 'canvas' : 'svg';
}
