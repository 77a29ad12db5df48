// Turns the JSON Schemas (2020-12) of an OpenAPI 3.1 document into fast-check
// arbitraries of values those schemas accept. Generic: it knows keywords, not
// operations. A `hint` lets the caller mix its own values (real ids) into the
// strings of named properties.
import fc from 'fast-check';

export type Schema = Record<string, any> | boolean;

export type SchemaArbitraryOptions = {
  /** The document `$ref`s point into. */
  root: Record<string, any>;
  /** Called for every string schema with the name of its property (or parameter); may widen the arbitrary. */
  hint?: (name: string, generated: fc.Arbitrary<unknown>) => fc.Arbitrary<unknown>;
};

const INT32 = { min: -(2 ** 31), max: 2 ** 31 - 1 };

/** Any JSON, as `{}` allows. */
export const anyJson = fc.jsonValue({ maxDepth: 3 });

function resolve(schema: Schema, root: Record<string, any>): Schema {
  let current = schema;
  while (typeof current === 'object' && typeof current.$ref === 'string') {
    const { $ref, ...siblings } = current;
    const target = ($ref as string)
      .replace(/^#\//, '')
      .split('/')
      .map((segment) => decodeURIComponent(segment).replace(/~1/g, '/').replace(/~0/g, '~'))
      .reduce((node: any, segment) => node?.[segment], root);
    if (target === undefined) throw new Error(`Unresolvable $ref ${$ref}`);
    current = Object.keys(siblings).length ? mergeSchemas(target, siblings) : target;
  }
  return current;
}

/** The conjunction of two object schemas as far as generation needs it: properties and required merge. */
function mergeSchemas(base: Schema, extra: Schema): Schema {
  if (typeof base !== 'object' || typeof extra !== 'object') return extra === false || base === false ? false : typeof base === 'object' ? base : extra;
  const merged: Record<string, any> = { ...base, ...extra };
  if (base.properties || extra.properties) {
    merged.properties = { ...base.properties };
    for (const [name, schema] of Object.entries(extra.properties ?? {})) {
      merged.properties[name] = base.properties?.[name] ? mergeSchemas(base.properties[name], schema as Schema) : schema;
    }
  }
  if (base.required || extra.required) merged.required = [...new Set([...(base.required ?? []), ...(extra.required ?? [])])];
  return merged;
}

/** The schema with its `type` narrowed to one of several, for `type: ['string', 'null']`. */
function typeBranches(schema: Record<string, any>): Record<string, any>[] | null {
  if (!Array.isArray(schema.type)) return null;
  return schema.type.map((type: string) => ({ ...schema, type }));
}

function stringArbitrary(schema: Record<string, any>): fc.Arbitrary<string> {
  const minLength: number = schema.minLength ?? 0;
  const maxLength: number | undefined = schema.maxLength;
  const pattern = typeof schema.pattern === 'string' ? new RegExp(schema.pattern, 'u') : null;
  const fits = (value: string) => {
    const length = [...value].length;
    return length >= minLength && (maxLength === undefined || length <= maxLength) && (!pattern || pattern.test(value));
  };
  let base: fc.Arbitrary<string>;
  switch (schema.format) {
    case 'date-time':
      base = fc
        .tuple(fc.date({ min: new Date('0000-01-01T00:00:00Z'), max: new Date('9999-12-31T23:59:59.999Z'), noInvalidDate: true }), fc.boolean())
        .map(([date, millis]) => (millis ? date.toISOString() : date.toISOString().replace(/\.\d{3}Z$/, 'Z')));
      break;
    case 'date':
      base = fc.date({ min: new Date('0000-01-01T00:00:00Z'), max: new Date('9999-12-31T00:00:00Z'), noInvalidDate: true }).map((date) => date.toISOString().slice(0, 10));
      break;
    case 'email':
      base = fc
        .tuple(fc.stringMatching(/^[A-Za-z0-9_'+-]{1,20}$/), fc.stringMatching(/^[a-z0-9]{1,12}$/), fc.constantFrom('com', 'org', 'example', 'io'))
        .map(([local, domain, tld]) => `${local}@${domain}.${tld}`);
      break;
    case 'uuid':
      base = fc.uuid();
      break;
    case 'uri':
      base = fc.webUrl();
      break;
    default:
      if (pattern) {
        base = fc.stringMatching(pattern, maxLength === undefined ? {} : { maxLength });
      } else {
        const unit = fc.oneof(
          { weight: 4, arbitrary: fc.constant('grapheme-ascii' as const) },
          { weight: 1, arbitrary: fc.constant('grapheme' as const) },
          { weight: 1, arbitrary: fc.constant('binary' as const) },
        );
        // Lengths count code points, as JSON Schema does; 'binary' units are single code points.
        return unit.chain((kind) =>
          kind === 'grapheme'
            ? fc.string({ unit: 'grapheme-composite', minLength, maxLength })
            : fc.string({ unit: kind, minLength, maxLength }),
        );
      }
  }
  return base.filter(fits);
}

function numberArbitrary(schema: Record<string, any>): fc.Arbitrary<number> {
  const integer = schema.type === 'integer';
  const bounds = schema.format === 'int32' ? INT32 : integer ? { min: Number.MIN_SAFE_INTEGER, max: Number.MAX_SAFE_INTEGER } : { min: -1e308, max: 1e308 };
  let min: number = schema.minimum ?? bounds.min;
  let max: number = schema.maximum ?? bounds.max;
  if (typeof schema.exclusiveMinimum === 'number') min = Math.max(min, integer ? Math.floor(schema.exclusiveMinimum) + 1 : schema.exclusiveMinimum);
  if (typeof schema.exclusiveMaximum === 'number') max = Math.min(max, integer ? Math.ceil(schema.exclusiveMaximum) - 1 : schema.exclusiveMaximum);
  if (integer) {
    const edges = [min, max, 0, 1, -1].filter((edge) => edge >= min && edge <= max);
    const value = min >= INT32.min && max <= INT32.max ? fc.integer({ min, max }) : fc.maxSafeInteger().filter((n) => n >= min && n <= max);
    return fc.oneof({ weight: 4, arbitrary: value }, { weight: 1, arbitrary: fc.constantFrom(...edges) });
  }
  return fc
    .double({ min, max, noNaN: true, noDefaultInfinity: true, minExcluded: typeof schema.exclusiveMinimum === 'number', maxExcluded: typeof schema.exclusiveMaximum === 'number' })
    .filter((n) => !Object.is(n, -0));
}

function objectArbitrary(schema: Record<string, any>, options: SchemaArbitraryOptions): fc.Arbitrary<Record<string, unknown>> {
  const properties: Record<string, Schema> = schema.properties ?? {};
  const required: string[] = (schema.required ?? []).filter((name: string) => name in properties || schema.additionalProperties !== false);
  const model: Record<string, fc.Arbitrary<unknown>> = {};
  for (const [name, property] of Object.entries(properties)) {
    if (property === false) continue;
    model[name] = arbitraryFromSchema(property, options, name);
  }
  // Required names without a property schema take any JSON.
  for (const name of required) model[name] ??= anyJson;
  let arbitrary: fc.Arbitrary<Record<string, unknown>> = fc.record(model, { requiredKeys: required });
  const additional = schema.additionalProperties;
  if (additional !== undefined && additional !== false && !Object.keys(properties).length) {
    const keys = schema.propertyNames ? (arbitraryFromSchema(schema.propertyNames, options) as fc.Arbitrary<string>) : fc.string({ maxLength: 20 });
    const values = additional === true ? anyJson : arbitraryFromSchema(additional, options);
    arbitrary = fc
      .tuple(arbitrary, fc.dictionary(keys.filter((key) => !(key in model)), values, { maxKeys: 5, noNullPrototype: true }))
      .map(([known, extra]) => ({ ...extra, ...known }));
  }
  const minProperties: number = schema.minProperties ?? 0;
  const maxProperties: number = schema.maxProperties ?? Infinity;
  if (minProperties > 0 || maxProperties < Infinity) {
    arbitrary = arbitrary.filter((value) => Object.keys(value).length >= minProperties && Object.keys(value).length <= maxProperties);
  }
  return arbitrary;
}

/** Generates values the schema accepts. `name` is the property or parameter the schema belongs to. */
export function arbitraryFromSchema(input: Schema, options: SchemaArbitraryOptions, name = ''): fc.Arbitrary<unknown> {
  const schema = resolve(input, options.root);
  if (schema === true) return anyJson;
  if (schema === false) throw new Error('A `false` schema accepts nothing');
  if ('const' in schema) return fc.constant(schema.const);
  if (Array.isArray(schema.enum)) return fc.constantFrom(...schema.enum);

  const { allOf, anyOf, oneOf, ...rest } = schema;
  if (Array.isArray(allOf)) return arbitraryFromSchema(allOf.reduce(mergeSchemas, rest), options, name);
  const alternatives = (anyOf ?? oneOf) as Schema[] | undefined;
  if (Array.isArray(alternatives)) {
    // Siblings of anyOf/oneOf apply to every branch. For oneOf, a branch leaves
    // out what the other branches require, so one value matches exactly one.
    const exclusive = Array.isArray(oneOf);
    const branches = alternatives.map((alternative, index) => {
      let branch = mergeSchemas(rest, resolve(alternative, options.root));
      if (exclusive && typeof branch === 'object') {
        const own = new Set<string>(branch.required ?? []);
        const others = alternatives.flatMap((other, otherIndex) => (otherIndex === index || typeof other !== 'object' ? [] : resolve(other, options.root) as any)?.required ?? []);
        const excluded = others.filter((other: string) => !own.has(other));
        if (excluded.length && branch.properties) {
          branch = { ...branch, properties: Object.fromEntries(Object.entries(branch.properties).filter(([key]) => !excluded.includes(key))) };
        }
      }
      return arbitraryFromSchema(branch, options, name);
    });
    return fc.oneof(...branches);
  }

  const branches = typeBranches(schema);
  if (branches) return fc.oneof(...branches.map((branch) => arbitraryFromSchema(branch, options, name)));

  switch (schema.type) {
    case 'null':
      return fc.constant(null);
    case 'boolean':
      return fc.boolean();
    case 'integer':
    case 'number':
      return numberArbitrary(schema);
    case 'string': {
      const generated = stringArbitrary(schema);
      return options.hint ? options.hint(name, generated) : generated;
    }
    case 'array': {
      const items = schema.items === undefined ? anyJson : arbitraryFromSchema(schema.items, options, name);
      const constraints = { minLength: schema.minItems ?? 0, maxLength: Math.min(schema.maxItems ?? 10, 10) };
      if (constraints.minLength > constraints.maxLength) constraints.maxLength = constraints.minLength;
      return schema.uniqueItems ? fc.uniqueArray(items, { ...constraints, selector: (value) => JSON.stringify(value) }) : fc.array(items, constraints);
    }
    case 'object':
      return objectArbitrary(schema, options);
    default:
      // No type: an object schema by its keywords, else any JSON.
      if (schema.properties || schema.required || schema.additionalProperties !== undefined) return objectArbitrary(schema, options);
      return anyJson;
  }
}

/** The JSON types a schema admits, for building values of a wrong type. */
export function schemaTypes(input: Schema, root: Record<string, any>): Set<string> {
  const schema = resolve(input, root);
  if (typeof schema !== 'object') return new Set(['any']);
  if ('const' in schema) return new Set([jsonType(schema.const)]);
  if (Array.isArray(schema.enum)) return new Set(schema.enum.map(jsonType));
  const alternatives = (schema.anyOf ?? schema.oneOf ?? schema.allOf) as Schema[] | undefined;
  if (Array.isArray(alternatives) && !schema.type) return new Set(alternatives.flatMap((alternative) => [...schemaTypes(alternative, root)]));
  if (Array.isArray(schema.type)) return new Set(schema.type.flatMap((type: string) => (type === 'integer' ? ['integer', 'number'] : [type])));
  if (typeof schema.type === 'string') return new Set(schema.type === 'integer' ? ['integer'] : [schema.type]);
  if (schema.properties) return new Set(['object']);
  return new Set(['any']);
}

export function jsonType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

/** The schema of a property of an object schema (resolving refs, looking into anyOf/oneOf/allOf), or undefined. */
export function propertySchema(input: Schema, name: string, root: Record<string, any>): Schema | undefined {
  const schema = resolve(input, root);
  if (typeof schema !== 'object') return undefined;
  if (schema.properties?.[name] !== undefined) return schema.properties[name];
  for (const alternative of [...(schema.allOf ?? []), ...(schema.anyOf ?? []), ...(schema.oneOf ?? [])] as Schema[]) {
    const found = propertySchema(alternative, name, root);
    if (found !== undefined) return found;
  }
  if (typeof schema.additionalProperties === 'object') return schema.additionalProperties;
  return undefined;
}

/** Items schema of an array schema (resolving refs, looking into anyOf/oneOf). */
export function itemsSchema(input: Schema, root: Record<string, any>): Schema | undefined {
  const schema = resolve(input, root);
  if (typeof schema !== 'object') return undefined;
  if (schema.items !== undefined) return schema.items;
  for (const alternative of [...(schema.anyOf ?? []), ...(schema.oneOf ?? [])] as Schema[]) {
    const found = itemsSchema(alternative, root);
    if (found !== undefined) return found;
  }
  return undefined;
}

/** Names an object schema requires (with those of allOf). */
export function requiredNames(input: Schema, root: Record<string, any>): string[] {
  const schema = resolve(input, root);
  if (typeof schema !== 'object') return [];
  return [...(schema.required ?? []), ...((schema.allOf ?? []) as Schema[]).flatMap((part) => requiredNames(part, root))];
}
