// The input rules every request obeys (server/input-rules.ts), stated in the OpenAPI
// document where they apply, so that it allows no request the service refuses for them: no
// string and no member name contains a NUL, and JSON nests at most MAX_INPUT_DEPTH levels,
// free-form values (`{}`, an object's unnamed members) included. Lone surrogates cannot be
// put in a pattern portably; the document's description says them in words.
import { MAX_INPUT_DEPTH, NUL_PATTERN } from '../input-rules.ts';

type Json = Record<string, unknown>;

/** The text rule as a pattern, for a string with no pattern of its own: generators build values from it. */
const NUL_FREE_PATTERN = `^[^${NUL_PATTERN}]*$`;
/** The text rule beside a field's own pattern or format (`not`, so that they stay as they are). */
const NO_NUL = { not: { type: 'string', pattern: NUL_PATTERN } };

/**
 * Whether a field's own pattern could match a string containing NUL: where it is not anchored
 * at both ends, or through `.`, a negated class that does not name NUL, `\S`, `\D`, `\W`,
 * `\P{...}` or NUL itself. The anchored patterns here are character classes, which cannot.
 */
function admitsNul(pattern: string): boolean {
  if (!pattern.startsWith('^') || !pattern.endsWith('$')) return true;
  const rest = pattern.replace(/\[\^(?:\\.|[^\]])*?\\u0000(?:\\.|[^\]])*\]/g, '');
  if (/\\[SDWP0]|\\x00|\\u0000|\[\^/.test(rest)) return true;
  return rest.replace(/\\./g, '').replace(/\[[^\]]*\]/g, '').includes('.');
}

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
        { type: 'string', pattern: NUL_FREE_PATTERN },
        ...(nesting > 0
          ? [{ type: ['array', 'object'], items: jsonValueRef(nesting - 1), propertyNames: { pattern: NUL_FREE_PATTERN }, additionalProperties: jsonValueRef(nesting - 1) }]
          : []),
      ],
    },
  ]),
);

/**
 * What a string schema needs besides its own keywords to refuse NUL: the text pattern when it
 * has no pattern or format (a pattern generators build values from), else `not` when its own
 * pattern or format could let a NUL through.
 */
function withoutNul(schema: Json): Json {
  const own = typeof schema.pattern === 'string' ? schema.pattern : undefined;
  if (own === undefined && schema.format === undefined) return { pattern: NUL_FREE_PATTERN };
  if (own !== undefined && !admitsNul(own)) return {};
  return schema.not === undefined ? NO_NUL : { allOf: [...((schema.allOf as Json[] | undefined) ?? []), NO_NUL] };
}

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
  if (types.includes('string') && ruled.enum === undefined && ruled.const === undefined) Object.assign(ruled, withoutNul(ruled));
  const members = jsonValueRef(Math.max(0, MAX_INPUT_DEPTH - level));
  if (types.includes('object')) {
    if (ruled.additionalProperties === undefined || ruled.additionalProperties === true) ruled.additionalProperties = members;
    if (ruled.additionalProperties !== false) {
      const names = (ruled.propertyNames as Json | undefined) ?? {};
      ruled.propertyNames = { ...names, ...withoutNul(names) };
    }
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

/**
 * Every parameter and request body of a procedure's operation, with the input rules stated.
 * Not a header's: HTTP cannot carry a NUL there, so the rule would say nothing, and a
 * generator asked for a header that breaks it could only make requests that cannot be sent.
 */
export function stateInputRules(entry: OperationObject): void {
  // Copies: parameters such as apiKey are shared by every operation. A parameter is a member of the input.
  entry.parameters = entry.parameters?.map((parameter) =>
    parameter.schema && parameter.in !== 'header' ? { ...parameter, schema: withInputRules(parameter.schema as Json, 2) } : parameter,
  );
  for (const media of Object.values(entry.requestBody?.content ?? {})) {
    if (media.schema) media.schema = withInputRules(media.schema, 1);
  }
}
