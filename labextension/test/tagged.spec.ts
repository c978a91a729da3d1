import { decode, describe as describeValue, keyId, pyRepr } from '../src/comm/tagged';

/** Values as `icedtea_jupyter/executor/state.py::encode` sends them. */
const encoded = {
  highest: { Alice: 120, Bob: 5000 },
  blacklist: { $t: 'set', v: ['Bob'] },
  last: { $t: 'tuple', v: ['Bob', 5000, 5000] },
  single: { $t: 'tuple', v: [1] },
  empty: { $t: 'set', v: [] },
  byKey: {
    $t: 'dict',
    items: [
      [{ $t: 'tuple', v: ['a', 1] }, 2],
      [3, 'x']
    ]
  },
  payment: { $t: 'row', v: { customer: 'Chris', amount: 10, currency: '$' } },
  big: { $t: 'int', v: '123456789012345678901' },
  inf: { $t: 'float', v: 'inf' },
  nan: { $t: 'float', v: 'nan' },
  raw: { $t: 'bytes', v: 'aGknAA==' },
  when: { $t: 'datetime', v: '2026-11-22T10:00:00' },
  price: { $t: 'decimal', v: '1.50' },
  huge: { $t: 'summary', type: 'dict', note: 'more than 20,000 entries', len: 25000, sample: ["'k0'", "'k1'"] },
  model: { $t: 'object', type: 'sklearn.Model', repr: 'Model(depth=3)', attrs: { depth: 3 } },
  text: "it's",
  none: null,
  flag: true
};

describe('decode (the kernel decode, mirrored)', () => {
  it('rebuilds Python values as plain JavaScript', () => {
    const value = decode(encoded) as { [key: string]: unknown };
    expect(value.highest).toEqual({ Alice: 120, Bob: 5000 });
    expect(value.blacklist).toEqual(new Set(['Bob']));
    expect(value.last).toEqual(['Bob', 5000, 5000]);
    expect(value.byKey).toEqual(
      new Map<unknown, unknown>([
        [keyId({ $t: 'tuple', v: ['a', 1] }), 2],
        [3, 'x']
      ])
    );
    expect(value.payment).toEqual({ customer: 'Chris', amount: 10, currency: '$' });
    expect(value.big).toBe(BigInt('123456789012345678901'));
    expect(value.inf).toBe(Infinity);
    expect(Number.isNaN(value.nan)).toBe(true);
    expect(Array.from(value.raw as Uint8Array)).toEqual([0x68, 0x69, 0x27, 0x00]);
    expect(value.when).toBe('2026-11-22T10:00:00');
    expect(value.price).toBe('1.50');
    expect(value.huge).toMatchObject({ $summary: true, type: 'dict', len: 25000 });
    expect(value.model).toEqual({ $object: true, type: 'sklearn.Model', repr: 'Model(depth=3)', attrs: { depth: 3 } });
    expect(value.none).toBeNull();
  });
});

describe('pyRepr', () => {
  const cases: [string, string][] = [
    ['highest', "{'Alice': 120, 'Bob': 5000}"],
    ['blacklist', "{'Bob'}"],
    ['last', "('Bob', 5000, 5000)"],
    ['single', '(1,)'],
    ['empty', 'set()'],
    ['byKey', "{('a', 1): 2, 3: 'x'}"],
    ['payment', "Row(customer='Chris', amount=10, currency='$')"],
    ['big', '123456789012345678901'],
    ['inf', 'inf'],
    ['raw', "b'hi\\'\\x00'"],
    ['when', 'datetime(2026-11-22T10:00:00)'],
    ['price', "Decimal('1.50')"],
    ['huge', '<dict, 25,000 items: more than 20,000 entries>'],
    ['model', 'Model(depth=3)'],
    ['text', '"it\'s"'],
    ['none', 'None'],
    ['flag', 'True']
  ];
  it.each(cases)('%s', (name, text) => {
    expect(pyRepr((encoded as { [key: string]: unknown })[name])).toBe(text);
  });

  it('cuts long values early', () => {
    const long = Array.from({ length: 20000 }, (_, i) => i);
    const text = pyRepr(long, 50);
    expect(text.length).toBe(51);
    expect(text.endsWith('…')).toBe(true);
  });
});

describe('describe (the tree of a value)', () => {
  it('gives containers their size and children, made on demand', () => {
    const tree = describeValue(encoded.highest);
    expect(tree).toMatchObject({ type: 'dict', size: 2, text: "{'Alice': 120, 'Bob': 5000}" });
    const entries = tree.entries!();
    expect(entries.map(e => [e.label, e.keyId, e.value.text])).toEqual([
      ["'Alice'", '"Alice"', '120'],
      ["'Bob'", '"Bob"', '5000']
    ]);
    const keyed = describeValue(encoded.byKey).entries!();
    expect(keyed[0]).toMatchObject({ label: "('a', 1)", keyId: keyId({ v: ['a', 1], $t: 'tuple' }) });
    expect(describeValue(encoded.payment).entries!().map(e => e.label)).toEqual(['customer', 'amount', 'currency']);
    expect(describeValue(encoded.blacklist)).toMatchObject({ type: 'set', size: 1 });
  });

  it('says why a summarised value is not shown whole', () => {
    const tree = describeValue(encoded.huge);
    expect(tree.note).toBe('more than 20,000 entries');
    expect(tree.entries!().map(e => e.value.text)).toEqual(["'k0'", "'k1'"]);
  });

  it('types scalars as Python does', () => {
    expect(describeValue(3)).toEqual({ type: 'int', text: '3' });
    expect(describeValue(2.5)).toEqual({ type: 'float', text: '2.5' });
    expect(describeValue(null)).toEqual({ type: 'NoneType', text: 'None' });
    expect(describeValue(encoded.price)).toEqual({ type: 'Decimal', text: "Decimal('1.50')" });
  });
});

describe('keyId', () => {
  it('is the same whatever the order of an object key', () => {
    expect(keyId({ $t: 'tuple', v: [1, 2] })).toBe(keyId({ v: [1, 2], $t: 'tuple' }));
    expect(keyId('Bob')).toBe('"Bob"');
    expect(keyId(3)).not.toBe(keyId('3'));
  });
});
