import type { ISkewCell } from '../src/comm/protocol';
import { cellId, rowChange } from '../src/skew/liveRows';

function cell(operator: string, partition: number, records: number): ISkewCell {
  return { operator, partition, records_in: records, seconds: records / 100 } as ISkewCell;
}

describe('pushed heat map cells against the drawn view', () => {
  it('modifies drawn cells in place, puts new ones in and takes removed ones away', () => {
    const a = cell('parse', 0, 10);
    const b = cell('parse', 1, 20);
    const c = cell('sum', 0, 5);
    const drawn = new Map([a, b, c].map(row => [cellId(row), row as object]));
    const grown = cell('parse', 1, 35); // b grew
    const same = cell('parse', 0, 10); // a pushed again, unchanged
    const fresh = cell('sum', 1, 1);
    const insert = new Map([grown, same, fresh].map(row => [cellId(row), row as unknown]));
    const remove = new Set([cellId(c), cellId(grown), cellId(same), cellId(fresh)]);

    const change = rowChange(drawn, remove, insert);

    expect(change.remove).toEqual([c]);
    expect(change.insert).toEqual([fresh]);
    expect(change.modify).toEqual([
      [b, 'records_in', 35],
      [b, 'seconds', 0.35]
    ]);
    expect(change.modify[0][0]).toBe(b); // the drawn row itself: Vega keeps its mark
    expect([...drawn.keys()].sort()).toEqual([cellId(a), cellId(b), cellId(fresh)].sort());
  });

  it('removes a row pushed away that was never drawn as nothing', () => {
    const drawn = new Map<string, object>();
    const change = rowChange(drawn, new Set(['parse\u00000']), new Map());
    expect(change).toEqual({ remove: [], insert: [], modify: [] });
  });
});
