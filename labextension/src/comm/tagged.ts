/**
 * The tagged JSON of `icedtea_jupyter/executor/state.py::encode`, read for display.
 *
 * Plain JSON values stand for themselves; other Python values are objects with a
 * `"$t"` tag: `dict` (non-string keys), `tuple`, `set`, `int` (beyond 2**53), `float`
 * (inf, nan, and whole floats: `5000.0`, which JSON would make `5000`), `bytes`,
 * `datetime`, `date`, `time`, `decimal`, `row` (a PySpark Row), `summary` (a value too
 * large to ship) and `object` (any other object: type, repr, attributes). `decode`
 * mirrors the kernel's `decode`; `describe` makes the tree the state view shows;
 * `pyRepr` the Python-like one-line text. Nothing is evaluated.
 */

import type { Tagged } from './protocol';

/** A decoded summary: a value too large or too strange to ship. */
export interface ISummaryValue {
  $summary: true;
  type: string;
  note: string;
  len?: number;
  sample?: string[];
  repr?: string;
}

/** A decoded object of a class the frontend does not know. */
export interface IObjectValue {
  $object: true;
  type: string;
  repr: string;
  attrs: { [name: string]: unknown };
}

/**
 * Plain JavaScript for a tagged value, as `decode` rebuilds Python values: tuples and
 * lists are arrays, sets are `Set`s, dicts with non-string keys `Map`s, rows plain
 * objects, big ints `BigInt`s, bytes `Uint8Array`s; dates, times and decimals stay
 * their ISO or decimal text.
 */
export function decode(value: Tagged): unknown {
  if (Array.isArray(value)) {
    return value.map(decode);
  }
  if (!isObject(value)) {
    return value;
  }
  const tag = value.$t;
  if (tag === undefined) {
    const out: { [key: string]: unknown } = {};
    for (const [k, v] of Object.entries(value)) {
      out[k] = decode(v);
    }
    return out;
  }
  switch (tag) {
    case 'dict':
      return new Map(items(value).map(([k, v]) => [decodeKey(k), decode(v)]));
    case 'tuple':
      return list(value.v).map(decode);
    case 'set':
      return new Set(list(value.v).map(decodeKey));
    case 'int':
      return toBigInt(value.v);
    case 'float':
      return floatOf(String(value.v));
    case 'bytes':
      return bytesOf(String(value.v));
    case 'datetime':
    case 'date':
    case 'time':
    case 'decimal':
      return String(value.v);
    case 'row':
      return decode(value.v);
    case 'summary':
      return { ...(value as object), $summary: true } as ISummaryValue;
    case 'object':
    default:
      return {
        $object: true,
        type: String(value.type ?? tag),
        repr: String(value.repr ?? `<${String(value.type ?? tag)}>`),
        attrs: (decode(value.attrs ?? {}) as IObjectValue['attrs']) ?? {}
      } as IObjectValue;
  }
}

/** A dict key or set item: hashable as Python would hash it (containers as their JSON). */
function decodeKey(value: Tagged): unknown {
  const decoded = decode(value);
  return typeof decoded === 'object' && decoded !== null ? keyId(value) : decoded;
}

/**
 * A canonical text for a tagged value, equal for equal values whatever the key order:
 * how changed keys (`IChanged.keys`) are matched with the keys of a state.
 */
export function keyId(value: Tagged): string {
  return JSON.stringify(sortKeys(value));
}

function sortKeys(value: Tagged): unknown {
  if (Array.isArray(value)) {
    return value.map(sortKeys);
  }
  if (!isObject(value)) {
    return value;
  }
  const out: { [key: string]: unknown } = {};
  for (const key of Object.keys(value).sort()) {
    out[key] = sortKeys(value[key]);
  }
  return out;
}

/** One child of a container: its key as shown, its canonical key and its value. */
export interface IEntry {
  /** `'Bob'`, `0`, `amount`: the key, index or attribute as the tree shows it. */
  label: string;
  /** `keyId` of the key (for dicts; the index for sequences). */
  keyId: string;
  value: IDescribed;
}

/** A value described for the tree view. */
export interface IDescribed {
  /** Python type name: `dict`, `list`, `tuple`, `set`, `Row`, `str`, `float`, or an object's type. */
  type: string;
  /** Python-like one-line text, cut at a few hundred characters. */
  text: string;
  /** Containers (and objects with attributes): the number of children. */
  size?: number;
  /** The children, made on first access (a state variable may hold 20,000 entries). */
  entries?: () => IEntry[];
  /** A summary: why the kernel did not ship the value. */
  note?: string;
}

/** The tree view of a tagged value. */
export function describe(value: Tagged): IDescribed {
  if (value === null || value === undefined) {
    return { type: 'NoneType', text: 'None' };
  }
  if (typeof value === 'boolean') {
    return { type: 'bool', text: value ? 'True' : 'False' };
  }
  if (typeof value === 'number') {
    return { type: Number.isInteger(value) ? 'int' : 'float', text: numberText(value) };
  }
  if (typeof value === 'string') {
    return { type: 'str', text: pyRepr(value) };
  }
  if (Array.isArray(value)) {
    return container('list', value.length, value, () => sequence(value));
  }
  if (!isObject(value)) {
    return { type: typeof value, text: String(value) };
  }
  const tag = value.$t;
  if (tag === undefined) {
    const keys = Object.keys(value);
    return container('dict', keys.length, value, () =>
      keys.map(k => ({ label: pyRepr(k), keyId: JSON.stringify(k), value: describe(value[k]) }))
    );
  }
  switch (tag) {
    case 'dict': {
      const pairs = items(value);
      return container('dict', pairs.length, value, () =>
        pairs.map(([k, v]) => ({ label: pyRepr(k), keyId: keyId(k), value: describe(v) }))
      );
    }
    case 'tuple':
    case 'set': {
      const values = list(value.v);
      return container(String(tag), values.length, value, () => sequence(values));
    }
    case 'row': {
      const fields = isObject(value.v) ? value.v : {};
      const keys = Object.keys(fields);
      return container('Row', keys.length, value, () =>
        keys.map(k => ({ label: k, keyId: JSON.stringify(k), value: describe(fields[k]) }))
      );
    }
    case 'summary': {
      const sample = list(value.sample).map(String);
      const described: IDescribed = {
        type: String(value.type ?? 'object'),
        text: pyRepr(value),
        note: String(value.note ?? 'too large to show'),
        size: sample.length
      };
      described.entries = () =>
        sample.map((s, i) => ({ label: String(i), keyId: String(i), value: { type: 'repr', text: s } }));
      return described;
    }
    case 'object': {
      const attrs = isObject(value.attrs) ? value.attrs : null;
      const keys = attrs ? Object.keys(attrs) : [];
      const described: IDescribed = { type: String(value.type ?? 'object'), text: pyRepr(value) };
      if (attrs && keys.length) {
        described.size = keys.length;
        described.entries = () => keys.map(k => ({ label: k, keyId: JSON.stringify(k), value: describe(attrs[k]) }));
      }
      return described;
    }
    default:
      return { type: scalarType(String(tag)), text: pyRepr(value) };
  }
}

function container(type: string, size: number, value: Tagged, entries: () => IEntry[]): IDescribed {
  return { type, size, text: pyRepr(value), entries };
}

function sequence(values: Tagged[]): IEntry[] {
  return values.map((v, i) => ({ label: String(i), keyId: String(i), value: describe(v) }));
}

function scalarType(tag: string): string {
  return tag === 'decimal' ? 'Decimal' : tag;
}

/** Characters of `pyRepr` before it cuts with `…`. */
export const REPR_LIMIT = 300;

/**
 * Python's `repr` of a tagged value, cut after `limit` characters: `('Bob', 5000, 5000)`,
 * `{'Bob'}`, `Row(customer='Chris', amount=10.0)`. Whole floats come tagged, so they
 * show as Python shows them (`10.0`), like the panel and the API.
 */
export function pyRepr(value: Tagged, limit = REPR_LIMIT): string {
  const out = new Budget(limit);
  write(value, out);
  return out.text();
}

/** A string builder that stops after its limit (a repr of 20,000 entries is cut early). */
class Budget {
  constructor(private readonly _limit: number) {}

  get full(): boolean {
    return this._length > this._limit;
  }

  push(text: string): void {
    if (!this.full) {
      this._parts.push(text);
      this._length += text.length;
    }
  }

  text(): string {
    const text = this._parts.join('');
    return text.length > this._limit ? text.slice(0, this._limit) + '…' : text;
  }

  private _parts: string[] = [];
  private _length = 0;
}

function write(value: Tagged, out: Budget): void {
  if (out.full) {
    return;
  }
  if (value === null || value === undefined) {
    out.push('None');
  } else if (typeof value === 'boolean') {
    out.push(value ? 'True' : 'False');
  } else if (typeof value === 'number') {
    out.push(numberText(value));
  } else if (typeof value === 'string') {
    out.push(quote(value));
  } else if (Array.isArray(value)) {
    writeSeq(value, '[', ']', out);
  } else if (isObject(value)) {
    writeTagged(value, out);
  } else {
    out.push(String(value));
  }
}

function writeTagged(value: { [key: string]: unknown }, out: Budget): void {
  const tag = value.$t;
  switch (tag) {
    case undefined:
      writePairs(
        Object.entries(value).map(([k, v]) => [k, v]),
        out
      );
      return;
    case 'dict':
      writePairs(items(value), out);
      return;
    case 'tuple': {
      const values = list(value.v);
      writeSeq(values, '(', values.length === 1 ? ',)' : ')', out);
      return;
    }
    case 'set': {
      const values = list(value.v);
      if (values.length === 0) {
        out.push('set()');
      } else {
        writeSeq(values, '{', '}', out);
      }
      return;
    }
    case 'row': {
      const fields = isObject(value.v) ? value.v : {};
      out.push('Row(');
      Object.entries(fields).forEach(([k, v], i) => {
        out.push(i ? `, ${k}=` : `${k}=`);
        write(v, out);
      });
      out.push(')');
      return;
    }
    case 'int':
    case 'float':
      out.push(String(value.v));
      return;
    case 'bytes':
      out.push(bytesRepr(String(value.v)));
      return;
    case 'datetime':
    case 'date':
    case 'time':
      out.push(`${String(tag)}(${String(value.v)})`);
      return;
    case 'decimal':
      out.push(`Decimal('${String(value.v)}')`);
      return;
    case 'summary': {
      const size = value.len !== undefined ? `, ${Number(value.len).toLocaleString('en-US')} items` : '';
      out.push(`<${String(value.type)}${size}: ${String(value.note)}>`);
      return;
    }
    case 'object':
    default:
      out.push(String(value.repr ?? `<${String(value.type ?? tag)}>`));
  }
}

function writeSeq(values: Tagged[], open: string, close: string, out: Budget): void {
  out.push(open);
  for (let i = 0; i < values.length && !out.full; i++) {
    if (i) {
      out.push(', ');
    }
    write(values[i], out);
  }
  out.push(close);
}

function writePairs(pairs: [Tagged, Tagged][], out: Budget): void {
  out.push('{');
  for (let i = 0; i < pairs.length && !out.full; i++) {
    out.push(i ? ', ' : '');
    write(pairs[i][0], out);
    out.push(': ');
    write(pairs[i][1], out);
  }
  out.push('}');
}

/** Python's quoting: single quotes unless the text has some and no double ones. */
function quote(text: string): string {
  const q = text.includes("'") && !text.includes('"') ? '"' : "'";
  const escaped = text.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/\r/g, '\\r').replace(/\t/g, '\\t');
  return q + (q === "'" ? escaped.replace(/'/g, "\\'") : escaped) + q;
}

function numberText(value: number): string {
  if (Number.isNaN(value)) {
    return 'nan';
  }
  if (!Number.isFinite(value)) {
    return value > 0 ? 'inf' : '-inf';
  }
  return String(value);
}

function floatOf(text: string): number {
  const t = text.toLowerCase();
  if (t === 'nan') {
    return NaN;
  }
  if (t === 'inf' || t === '+inf' || t === 'infinity') {
    return Infinity;
  }
  if (t === '-inf' || t === '-infinity') {
    return -Infinity;
  }
  return Number(text);
}

function toBigInt(text: unknown): bigint | string {
  try {
    return BigInt(String(text));
  } catch {
    return String(text);
  }
}

function bytesOf(base64: string): Uint8Array {
  let binary = '';
  try {
    binary = atob(base64);
  } catch {
    // Not base64: nothing to show.
  }
  const out = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) {
    out[i] = binary.charCodeAt(i);
  }
  return out;
}

function bytesRepr(base64: string): string {
  const bytes = bytesOf(base64);
  let text = "b'";
  for (const byte of bytes.slice(0, 64)) {
    if (byte === 0x27 || byte === 0x5c) {
      text += '\\' + String.fromCharCode(byte);
    } else if (byte >= 0x20 && byte < 0x7f) {
      text += String.fromCharCode(byte);
    } else {
      text += '\\x' + byte.toString(16).padStart(2, '0');
    }
  }
  return text + (bytes.length > 64 ? `…' (${bytes.length} bytes)` : "'");
}

function items(value: { [key: string]: unknown }): [Tagged, Tagged][] {
  return list(value.items).filter(pair => Array.isArray(pair) && pair.length === 2) as [Tagged, Tagged][];
}

function list(value: unknown): Tagged[] {
  return Array.isArray(value) ? value : [];
}

function isObject(value: unknown): value is { [key: string]: unknown } {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
