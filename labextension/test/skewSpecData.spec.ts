import { splitData } from '../src/skew/specData';

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
