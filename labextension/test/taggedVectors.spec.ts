/**
 * `tagged.ts` against the tagged-JSON vectors the Python suite reads too
 * (`tests/vectors/tagged_json.json`): what the sidebar shows of each encoded value.
 */
import * as fs from 'fs';
import * as path from 'path';

import { describe as describeValue, pyRepr } from '../src/comm/tagged';

interface IVector {
  name: string;
  tagged: unknown;
  shown: string;
  type?: string;
}

const VECTORS: { vectors: IVector[]; described: IVector[] } = JSON.parse(
  fs.readFileSync(path.join(__dirname, '..', '..', 'tests', 'vectors', 'tagged_json.json'), 'utf-8')
);

describe('the shared tagged-JSON vectors', () => {
  it.each(VECTORS.vectors.map(v => [v.name, v] as const))('%s', (_, vector) => {
    expect(pyRepr(vector.tagged)).toBe(vector.shown);
    const described = describeValue(vector.tagged);
    expect(described.type).toBe(vector.type);
    expect(described.text).toBe(vector.shown);
  });

  it.each(VECTORS.described.map(v => [v.name, v] as const))('a record a worker described: %s', (_, vector) => {
    expect(pyRepr(vector.tagged)).toBe(vector.shown);
  });
});
