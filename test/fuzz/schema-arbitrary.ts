// Turns the JSON Schemas (2020-12) of an OpenAPI 3.1 document into fast-check
// arbitraries of values those schemas accept. Generic: it knows keywords, not
// operations. A `hint` lets the caller mix its own values (real ids) into the
// strings of named properties.
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { ValidateFunction } from 'ajv';
import fc from 'fast-check';

export type Schema = Record<string, any> | boolean;

export type SchemaArbitraryOptions = {
  /** The document `$ref`s point into. */
  root: Record<string, any>;
  /** Called for every string schema with the name of its property (or parameter); may widen the arbitrary. */
  hint?: (name: string, generated: fc.Arbitrary<unknown>, schema: Record<string, any>) => fc.Arbitrary<unknown>;
  /** A generated value as a validator should see it: what `hint` mixed in replaced by a value of its kind. */
  concrete?: (value: unknown) => unknown;
};

/** How many `$ref`s deep a value is generated before a recursive schema (JSON of any shape) bottoms out. */
const MAX_REF_DEPTH = 4;
/** What a recursive schema becomes at MAX_REF_DEPTH: a scalar it accepts (checked by `accepts`). */
const LEAF = fc.oneof(fc.constant(null), fc.boolean(), fc.integer(), fc.string({ maxLength: 10 }));

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

/** A pattern a string must not match (`not: {type: 'string', pattern}`, how the document states the text rule). */
function forbiddenPattern(schema: Record<string, any>): RegExp | null {
  const not = schema.not;
  return not && typeof not === 'object' && typeof not.pattern === 'string' && (not.type === undefined || not.type === 'string') ? new RegExp(not.pattern, 'u') : null;
}

function stringArbitrary(schema: Record<string, any>): fc.Arbitrary<string> {
  const minLength: number = schema.minLength ?? 0;
  const maxLength: number | undefined = schema.maxLength;
  const pattern = typeof schema.pattern === 'string' ? new RegExp(schema.pattern, 'u') : null;
  const forbidden = forbiddenPattern(schema);
  // Strings are well-formed Unicode (I-JSON), as the document says in words.
  const fits = (value: string) => {
    const length = [...value].length;
    return (
      length >= minLength &&
      (maxLength === undefined || length <= maxLength) &&
      (!pattern || pattern.test(value)) &&
      !forbidden?.test(value) &&
      value.isWellFormed()
    );
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
        return unit
          .chain((kind) =>
            kind === 'grapheme'
              ? fc.string({ unit: 'grapheme-composite', minLength, maxLength })
              : fc.string({ unit: kind, minLength, maxLength }),
          )
          .filter(fits);
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

function objectArbitrary(schema: Record<string, any>, options: SchemaArbitraryOptions, refDepth: number): fc.Arbitrary<Record<string, unknown>> {
  const properties: Record<string, Schema> = schema.properties ?? {};
  const required: string[] = (schema.required ?? []).filter((name: string) => name in properties || schema.additionalProperties !== false);
  const model: Record<string, fc.Arbitrary<unknown>> = {};
  for (const [name, property] of Object.entries(properties)) {
    if (property === false) continue;
    model[name] = arbitraryFromSchema(property, options, name, refDepth);
  }
  // Required names without a property schema take any JSON.
  for (const name of required) model[name] ??= anyJson;
  let arbitrary: fc.Arbitrary<Record<string, unknown>> = fc.record(model, { requiredKeys: required });
  const additional = schema.additionalProperties;
  if (additional !== undefined && additional !== false && !Object.keys(properties).length) {
    const keys = schema.propertyNames ? (arbitraryFromSchema(schema.propertyNames, options, '', refDepth) as fc.Arbitrary<string>) : fc.string({ maxLength: 20 });
    const values = additional === true ? anyJson : arbitraryFromSchema(additional, options, '', refDepth);
    arbitrary = fc
      .tuple(arbitrary, fc.dictionary(keys.filter((key) => !(key in model)), values, { maxKeys: 5, noNullPrototype: true }))
      .map(([known, extra]) => ({ ...extra, ...known }));
  }
  // Rules between members (`dependentRequired`, `dependentSchemas`): generated, then kept when they hold.
  const dependencies = dependenciesOf(schema);
  const concrete = options.concrete ?? ((value: unknown) => value);
  if (dependencies) arbitrary = arbitrary.filter((value) => dependencies(concrete(value)) as boolean);
  const minProperties: number = schema.minProperties ?? 0;
  const maxProperties: number = schema.maxProperties ?? Infinity;
  if (minProperties > 0 || maxProperties < Infinity) {
    arbitrary = arbitrary.filter((value) => Object.keys(value).length >= minProperties && Object.keys(value).length <= maxProperties);
  }
  return arbitrary;
}

const dependencyAjv = new Ajv2020({ strict: false });
const dependencyValidators = new WeakMap<object, ValidateFunction | null>();

/** A validator of an object schema's rules between members, or null when it has none (they name no `$ref`). */
function dependenciesOf(schema: Record<string, any>): ValidateFunction | null {
  let validate = dependencyValidators.get(schema);
  if (validate === undefined) {
    const { dependentRequired, dependentSchemas } = schema;
    validate = dependentRequired || dependentSchemas ? constraintValidator({ dependentRequired, dependentSchemas }) : null;
    dependencyValidators.set(schema, validate);
  }
  return validate;
}

/** A validator of constraints that name no `$ref`. */
function constraintValidator(constraints: Record<string, unknown>): ValidateFunction {
  return dependencyAjv.compile(constraints);
}

/** Generates values the schema accepts. `name` is the property or parameter the schema belongs to. */
export function arbitraryFromSchema(input: Schema, options: SchemaArbitraryOptions, name = '', refDepth = 0): fc.Arbitrary<unknown> {
  const viaRef = typeof input === 'object' && typeof input.$ref === 'string';
  if (viaRef && refDepth >= MAX_REF_DEPTH) {
    const schema = resolve(input, options.root);
    return LEAF.filter((value) => accepts(schema, value, options.root));
  }
  if (viaRef) refDepth += 1;
  const schema = resolve(input, options.root);
  if (schema === true) return anyJson;
  if (schema === false) throw new Error('A `false` schema accepts nothing');
  if ('const' in schema) return fc.constant(schema.const);
  if (Array.isArray(schema.enum)) return fc.constantFrom(...schema.enum);

  const { allOf, anyOf, oneOf, ...rest } = schema;
  if (Array.isArray(allOf)) return arbitraryFromSchema(allOf.reduce(mergeSchemas, rest), options, name, refDepth);
  // Constraints between an object's members (exactly one of several fields): its values,
  // kept when exactly one branch holds.
  if (Array.isArray(oneOf) && rest.properties && !anyOf) {
    const holds = constraintValidator({ oneOf });
    const concrete = options.concrete ?? ((value: unknown) => value);
    return arbitraryFromSchema(rest, options, name, refDepth).filter((value) => holds(concrete(value)) as boolean);
  }
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
      return arbitraryFromSchema(branch, options, name, refDepth);
    });
    return fc.oneof(...branches);
  }

  const branches = typeBranches(schema);
  if (branches) return fc.oneof(...branches.map((branch) => arbitraryFromSchema(branch, options, name, refDepth)));

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
      return options.hint ? options.hint(name, generated, schema) : generated;
    }
    case 'array': {
      const items = schema.items === undefined ? anyJson : arbitraryFromSchema(schema.items, options, name, refDepth);
      const constraints = { minLength: schema.minItems ?? 0, maxLength: Math.min(schema.maxItems ?? 10, 10) };
      if (constraints.minLength > constraints.maxLength) constraints.maxLength = constraints.minLength;
      return schema.uniqueItems ? fc.uniqueArray(items, { ...constraints, selector: (value) => JSON.stringify(value) }) : fc.array(items, constraints);
    }
    case 'object':
      return objectArbitrary(schema, options, refDepth);
    default:
      // No type: an object schema by its keywords, else any JSON.
      if (schema.properties || schema.required || schema.additionalProperties !== undefined) return objectArbitrary(schema, options, refDepth);
      return anyJson;
  }
}

/** Whether a scalar satisfies a schema, as far as the document's free-form schemas go: types, alternatives, patterns. */
function accepts(input: Schema, value: unknown, root: Record<string, any>): boolean {
  const schema = resolve(input, root);
  if (typeof schema !== 'object') return schema;
  const alternatives = (schema.anyOf ?? schema.oneOf) as Schema[] | undefined;
  if (Array.isArray(alternatives) && !alternatives.some((alternative) => accepts(alternative, value, root))) return false;
  const types = typeof schema.type === 'string' ? [schema.type] : Array.isArray(schema.type) ? (schema.type as string[]) : null;
  const type = jsonType(value);
  if (types && !types.includes(type) && !(type === 'integer' && types.includes('number'))) return false;
  if (typeof value === 'string') {
    if (typeof schema.pattern === 'string' && !new RegExp(schema.pattern, 'u').test(value)) return false;
    if (forbiddenPattern(schema)?.test(value)) return false;
  }
  return true;
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
