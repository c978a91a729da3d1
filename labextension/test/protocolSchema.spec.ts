/**
 * `src/comm/protocol.ts` against the comm's one schema, `icedtea_jupyter/comm/protocol.json`
 * (the kernel's replies and events are checked against it by the Python suite). The
 * TypeScript checker reads the interfaces; both sides become the same plain shapes, so
 * a param, result or event field added, removed or retyped on either side fails here.
 */
import * as fs from 'fs';
import * as path from 'path';
import * as ts from 'typescript';

import { EVENT_TYPES, PROTOCOL_VERSION, REQUEST_METHODS } from '../src/comm/protocol';

/** A type as both sides are compared: JSON, with sorted union members. */
type Shape =
  | string
  | { literal: string }
  | { list: Shape }
  | { map: Shape }
  | { tuple: Shape[] }
  | { union: Shape[] }
  | { object: { [field: string]: { type: Shape; optional: boolean } }; other?: Shape };

type SchemaType = string | SchemaType[] | { [field: string]: SchemaType };

interface ISchema {
  version: number;
  types: { [name: string]: SchemaType };
  requests: { [method: string]: { params: SchemaType; result: SchemaType } };
  events: { [name: string]: SchemaType };
}

const SCHEMA: ISchema = JSON.parse(
  fs.readFileSync(path.join(__dirname, '..', '..', 'icedtea_jupyter', 'comm', 'protocol.json'), 'utf-8')
);

const SCALARS: { [name: string]: Shape } = {
  str: 'string',
  int: 'number',
  float: 'number',
  bool: 'boolean',
  null: 'null',
  any: 'unknown'
};

function union(members: Shape[]): Shape {
  const flat = members.flatMap(m => (typeof m === 'object' && 'union' in m ? m.union : [m]));
  if (flat.includes('unknown')) {
    return 'unknown';
  }
  const unique = [...new Map(flat.map(m => [JSON.stringify(m), m])).values()];
  unique.sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
  return unique.length === 1 ? unique[0] : { union: unique };
}

function object(fields: { [field: string]: { type: Shape; optional: boolean } }, other?: Shape): Shape {
  if (Object.keys(fields).length === 0 && other !== undefined) {
    return { map: other };
  }
  return other === undefined ? { object: fields } : { object: fields, other };
}

/** The shape of a schema type, named types expanded. */
function fromSchema(type: SchemaType): Shape {
  if (typeof type === 'string') {
    return SCALARS[type] ?? fromSchema(SCHEMA.types[type] ?? `unknown type ${type}`);
  }
  if (Array.isArray(type)) {
    const [form, ...args] = type as [string, ...SchemaType[]];
    switch (form) {
      case 'list':
        return { list: fromSchema(args[0]) };
      case 'map':
        return { map: fromSchema(args[0]) };
      case 'tuple':
        return { tuple: args.map(fromSchema) };
      case 'or':
        return union(args.map(fromSchema));
      case 'enum':
        return union(args.map(value => ({ literal: String(value) })));
    }
    throw new Error(`unknown type form ${form}`);
  }
  const fields: { [field: string]: { type: Shape; optional: boolean } } = {};
  for (const [name, value] of Object.entries(type)) {
    if (name !== '*') {
      fields[name.replace(/\?$/, '')] = { type: fromSchema(value), optional: name.endsWith('?') };
    }
  }
  return object(fields, '*' in type ? fromSchema(type['*']) : undefined);
}

const PROTOCOL_TS = path.join(__dirname, '..', 'src', 'comm', 'protocol.ts');
const program = ts.createProgram([PROTOCOL_TS], { strict: true, target: ts.ScriptTarget.ES2022, noEmit: true });
const checker = program.getTypeChecker();
const source = program.getSourceFile(PROTOCOL_TS)!;

/** The shape of a TypeScript type, as the checker resolves it. */
function fromTs(type: ts.Type): Shape {
  const flags = type.flags;
  if (flags & (ts.TypeFlags.Any | ts.TypeFlags.Unknown)) {
    return 'unknown';
  }
  if (flags & (ts.TypeFlags.Boolean | ts.TypeFlags.BooleanLiteral)) {
    return 'boolean'; // `x?: boolean` is `true | false | undefined`
  }
  for (const [flag, name] of [
    [ts.TypeFlags.String, 'string'],
    [ts.TypeFlags.Number, 'number'],
    [ts.TypeFlags.Null, 'null'],
    [ts.TypeFlags.Undefined, 'undefined']
  ] as const) {
    if (flags & flag) {
      return name;
    }
  }
  if (type.isStringLiteral()) {
    return { literal: type.value };
  }
  if (type.isUnion()) {
    return union(type.types.map(fromTs));
  }
  if (checker.isArrayType(type)) {
    return { list: fromTs(checker.getTypeArguments(type as ts.TypeReference)[0]) };
  }
  if (checker.isTupleType(type)) {
    return { tuple: checker.getTypeArguments(type as ts.TypeReference).map(fromTs) };
  }
  if (flags & (ts.TypeFlags.Object | ts.TypeFlags.Intersection)) {
    const fields: { [field: string]: { type: Shape; optional: boolean } } = {};
    for (const property of checker.getPropertiesOfType(type)) {
      const optional = (property.flags & ts.SymbolFlags.Optional) !== 0;
      let shape = fromTs(checker.getTypeOfSymbolAtLocation(property, source));
      if (optional) {
        shape = withoutUndefined(shape);
      }
      fields[property.name] = { type: shape, optional };
    }
    const index = checker.getIndexInfosOfType(type).find(info => !(info.type.flags & ts.TypeFlags.Never));
    return object(fields, index ? fromTs(index.type) : undefined);
  }
  throw new Error(`protocol.ts: a type the schema cannot say: ${checker.typeToString(type)}`);
}

function withoutUndefined(shape: Shape): Shape {
  return typeof shape === 'object' && 'union' in shape ? union(shape.union.filter(m => m !== 'undefined')) : shape;
}

/** Each property of an interface of protocol.ts (method or event name -> its type). */
function members(name: string): { [key: string]: Shape } {
  const declaration = source.statements.find(
    (s): s is ts.InterfaceDeclaration => ts.isInterfaceDeclaration(s) && s.name.text === name
  );
  if (!declaration) {
    throw new Error(`no interface ${name} in protocol.ts`);
  }
  const out: { [key: string]: Shape } = {};
  for (const property of checker.getPropertiesOfType(checker.getTypeAtLocation(declaration))) {
    out[property.name] = fromTs(checker.getTypeOfSymbolAtLocation(property, declaration));
  }
  return out;
}

describe('protocol.ts and the schema (icedtea_jupyter/comm/protocol.json)', () => {
  const methods = Object.keys(SCHEMA.requests);
  const events = Object.keys(SCHEMA.events);

  it('list the same methods and events, in the same order, and the same version', () => {
    expect([...REQUEST_METHODS]).toEqual(methods);
    expect([...EVENT_TYPES]).toEqual(events);
    expect(PROTOCOL_VERSION).toBe(SCHEMA.version);
  });

  it('name the same methods and events in their interfaces', () => {
    expect(Object.keys(members('IRequestParams')).sort()).toEqual([...methods].sort());
    expect(Object.keys(members('IRequestResults')).sort()).toEqual([...methods].sort());
    expect(Object.keys(members('IEventData')).sort()).toEqual([...events].sort());
  });

  it.each(methods)("give %s's params and result the same fields and types", method => {
    expect(members('IRequestParams')[method]).toEqual(fromSchema(SCHEMA.requests[method].params));
    expect(members('IRequestResults')[method]).toEqual(fromSchema(SCHEMA.requests[method].result));
  });

  it.each(events)("give event %s's data the same fields and types", event => {
    expect(members('IEventData')[event]).toEqual(fromSchema(SCHEMA.events[event]));
  });

  it('tell a field added, removed or retyped from a faithful copy', () => {
    const view = fromSchema('DebugView') as { object: { [field: string]: unknown } };
    expect(members('IRequestResults')['debug.jump']).toEqual(view);
    const { partition, ...removed } = view.object;
    expect(partition).toBeDefined();
    expect(members('IRequestResults')['debug.jump']).not.toEqual({ object: removed });
    const retyped = { object: { ...view.object, partition: { type: 'string', optional: false } } };
    expect(members('IRequestResults')['debug.jump']).not.toEqual(retyped);
  });
});
