import { CANVAS_CELLS, chartRenderer, splitData } from '../src/skew/specData';

function spec(values: unknown[], title = 'sum: key records per partition (live)'): unknown {
  const name = `data-${JSON.stringify(values).length}`;
  return { data: { name }, mark: { type: 'bar' }, title, datasets: { [name]: values } };
}

describe('splitData', () => {
  it('gives two live reports of one chart the same shape and their own numbers', () => {
    const before = splitData(spec([{ partition: 0, load: 1 }]));
    const after = splitData(spec([{ partition: 0, load: 12345 }]));
    expect(before).not.toBeNull();
    expect(after!.shape).toBe(before!.shape);
    expect(after!.values).toEqual([{ partition: 0, load: 12345 }]);
    expect(after!.name).not.toBe(before!.name); // Altair names a dataset by its content
  });

  it('tells a chart that changed apart (a new title: the final chart)', () => {
    const live = splitData(spec([{ partition: 0, load: 1 }]));
    const final = splitData(spec([{ partition: 0, load: 1 }], 'sum: key records per partition (final)'));
    expect(final!.shape).not.toBe(live!.shape);
  });

  it('refuses specs without exactly one named dataset', () => {
    expect(splitData(null)).toBeNull();
    expect(splitData({ mark: 'bar', data: { values: [] } })).toBeNull();
    expect(splitData({ data: { name: 'a' }, datasets: { a: [], b: [] } })).toBeNull();
  });
});

describe('chartRenderer', () => {
  const cells = (n: number) => spec(Array.from({ length: n }, (_, i) => ({ operator: 'sum', partition: i })));

  it('draws a heat map of 200 partitions x 12 operators on a canvas, a small one as SVG', () => {
    expect(chartRenderer('heatmap', cells(2400))).toBe('canvas');
    expect(chartRenderer('heatmap', cells(CANVAS_CELLS))).toBe('svg');
    expect(chartRenderer('heatmap', null)).toBe('svg');
  });

  it('keeps the bars SVG at any size (their aria labels name partition and key)', () => {
    expect(chartRenderer('spec', cells(2400))).toBe('svg');
  });

  it('keeps the load over time SVG at any size (its lines’ aria labels name the series)', () => {
    expect(chartRenderer('timeline', cells(2400))).toBe('svg');
  });
});
