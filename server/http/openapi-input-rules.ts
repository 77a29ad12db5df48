// The input rules every request obeys (server/input-rules.ts), stated in the OpenAPI
// document where they apply, so that it allows no request the service refuses for them: no
// string and no member name contains a NUL, and JSON nests at most MAX_INPUT_DEPTH levels,
// free-form values (`{}`, an object's unnamed members) included. Lone surrogates cannot be
// put in a pattern portably; the document's description says them in words.
import { MAX_INPUT_DEPTH, NUL_PATTERN } from '../input-rules.ts';

type Json = Record<string, unknown>;

/** The text rule as a schema: no string containing a NUL (`not`, so that a field's own pattern or format stays as it is). */
const NO_NUL = { not: { type: 'string', pattern: NUL_PATTERN } };

const jsonValueName = (nesting: number) => `JsonValue${nesting}`;
const jsonValueRef = (nesting: number) => ({ $ref: `#/components/schemas/${jsonValueName(nesting)}` });

/**
 * `JsonValue<n>`: any JSON value of such text with arrays and objects nested at most n deep.
 * One schema per depth rather than one recursive schema: generated clients (openapi-typescript)
 * cannot type a schema whose arrays hold itself, and the depth is part of the rule.
 */
export const JSON_VALUE_SCHEMAS: Record<string, Json> = Object.fromEntries(
  Array.from({ length: MAX_INPUT_DEPTH + 1 }, (_, nesting) => [
    jsonValueName(nesting),
    {
      description:
        `Any JSON value with arrays and objects nested at most ${nesting} deep, ` +
        'whose strings and member names contain no NUL character and no lone UTF-16 surrogate.',
      anyOf: [
        { type: ['null', 'boolean', 'number'] },
        { type: 'string', ...NO_NUL },
        ...(nesting > 0
          ? [{ type: ['array', 'object'], items: jsonValueRef(nesting - 1), propertyNames: NO_NUL, additionalProperties: jsonValueRef(nesting - 1) }]
          : []),
      ],
    },
  ]),
);

/** Keywords that only describe; a schema with nothing else accepts any value. */
const ANNOTATIONS = new Set(['description', 'title', 'default', 'examples', 'deprecated', 'readOnly', 'writeOnly']);

function typesOf(schema: Json): string[] {
  return Array.isArray(schema.type) ? (schema.type as string[]) : typeof schema.type === 'string' ? [schema.type] : [];
}

/**
 * The schema of a value at `level` of the input (the input itself is level 1), with the rules
 * stated: its strings and member names carry no NUL, and what it leaves free is a JsonValue
 * nesting no deeper than the levels left.
 */
function withInputRules(schema: Json, level: number): Json {
  const free = jsonValueRef(Math.max(0, MAX_INPUT_DEPTH - level + 1));
  if (Object.keys(schema).every((key) => ANNOTATIONS.has(key))) return { ...schema, ...free };
  const ruled: Json = { ...schema };
  const types = typesOf(schema);
  if (types.includes('string') && ruled.enum === undefined && ruled.const === undefined) {
    if (ruled.not === undefined) Object.assign(ruled, NO_NUL);
    else ruled.allOf = [...((ruled.allOf as Json[] | undefined) ?? []), NO_NUL];
  }
  const members = jsonValueRef(Math.max(0, MAX_INPUT_DEPTH - level));
  if (types.includes('object')) {
    if (ruled.additionalProperties === undefined || ruled.additionalProperties === true) ruled.additionalProperties = members;
    if (ruled.additionalProperties !== false) ruled.propertyNames = { ...(ruled.propertyNames as Json | undefined), ...NO_NUL };
  }
  if (ruled.properties) {
    ruled.properties = Object.fromEntries(Object.entries(ruled.properties as Record<string, Json>).map(([name, member]) => [name, withInputRules(member, level + 1)]));
  }
  for (const key of ['items', 'additionalProperties'] as const) {
    const member = ruled[key];
    if (member && typeof member === 'object' && member !== members) ruled[key] = withInputRules(member as Json, level + 1);
  }
  for (const key of ['anyOf', 'oneOf', 'allOf'] as const) {
    if (Array.isArray(ruled[key])) ruled[key] = (ruled[key] as Json[]).map((branch) => withInputRules(branch, level));
  }
  return ruled;
}

type OperationObject = { parameters?: Json[]; requestBody?: { content?: Record<string, { schema?: Json }> } };

/** Every parameter and request body of a procedure's operation, with the input rules stated. */
export function stateInputRules(entry: OperationObject): void {
  // Copies: parameters such as apiKey are shared by every operation. A parameter is a member of the input.
  entry.parameters = entry.parameters?.map((parameter) => (parameter.schema ? { ...parameter, schema: withInputRules(parameter.schema as Json, 2) } : parameter));
  for (const media of Object.values(entry.requestBody?.content ?? {})) {
    if (media.schema) media.schema = withInputRules(media.schema, 1);
  }
}
