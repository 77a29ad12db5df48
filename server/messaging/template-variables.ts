// Named template variables: `{{field}}`, `{{field|Default}}`, `{{field|transform}}` and
// `{{field|Default|transform}}`, turned into the numbered placeholders (`{{1}}`, `{{2}}`, ...)
// the messaging platform approves, plus the values to send for them. Pure: no I/O.

export const TEMPLATE_TRANSFORMS = ['uppercase', 'lowercase', 'capitalize'] as const;
export type TemplateTransform = (typeof TEMPLATE_TRANSFORMS)[number];

export type TemplateVariable = {
  field: string;
  defaultValue: string | null;
  transform: TemplateTransform | null;
  /** Normalised form, e.g. `first_name|there|capitalize`; equal expressions share a number. */
  expression: string;
};

export type TemplateSegment =
  | { kind: 'text'; text: string }
  | { kind: 'variable'; source: string; number: number; variable: TemplateVariable };

/** `variables[n - 1]` is the distinct variable numbered n, in order of first appearance. */
export type ParsedTemplate = { segments: TemplateSegment[]; variables: TemplateVariable[] };

export type RenderedTemplate = { text: string; numberedBody: string; parameters: string[] };

export type TemplateFields = Record<string, string | null | undefined>;

// Braces may not nest inside a variable, so `{{{a}}}` is `{`, a variable and `}`; the
// regular expression stays linear on long runs of unclosed braces.
const VARIABLE = /\{\{([^{}]*)\}\}/g;
const FIELD_NAME = /^[A-Za-z0-9_.-]+$/;

function asTransform(part: string): TemplateTransform | null {
  const lower = part.toLowerCase();
  return TEMPLATE_TRANSFORMS.find((name) => name === lower) ?? null;
}

/** Reads the inside of one `{{ ... }}`: a variable, or why it is not one. */
function readVariable(inner: string): { variable: TemplateVariable } | { problem: string } {
  const parts = inner.split('|').map((part) => part.trim());
  if (parts.length > 3) return { problem: `has ${parts.length} parts; at most field|default|transform is allowed` };
  const field = parts[0]!;
  if (!field) return { problem: 'has an empty field name' };
  if (!FIELD_NAME.test(field)) return { problem: `has field name "${field}"; use only letters, digits, "_", "." and "-"` };
  let defaultValue: string | null = null;
  let transform: TemplateTransform | null = null;
  if (parts.length === 2) {
    // A lone extra part is a transform only when it names one; otherwise it is the default.
    transform = asTransform(parts[1]!);
    if (!transform) defaultValue = parts[1]!;
  } else if (parts.length === 3) {
    defaultValue = parts[1]!;
    transform = asTransform(parts[2]!);
    if (!transform) {
      const known = TEMPLATE_TRANSFORMS.join(', ');
      return { problem: parts[2] ? `has unknown transform "${parts[2]}"; use one of ${known}` : `has an empty transform; use one of ${known}` };
    }
  }
  // An empty default changes nothing, so `{{name|}}` is the same variable as `{{name}}`.
  if (defaultValue === '') defaultValue = null;
  const normalised = field.toLowerCase();
  // Defaults hold no "|" and are never empty, so this text is unique per variable.
  const expression = [normalised, defaultValue ?? '', transform ?? ''].join('|').replace(/\|+$/, '');
  return { variable: { field: normalised, defaultValue, transform, expression } };
}

/** Malformed `{{ ... }}` text stays literal; validateTemplateBody says what is wrong with it. */
export function parseTemplateBody(body: string): ParsedTemplate {
  const segments: TemplateSegment[] = [];
  const variables: TemplateVariable[] = [];
  const numbers = new Map<string, number>();
  let literal = '';
  let end = 0;
  for (const match of body.matchAll(VARIABLE)) {
    literal += body.slice(end, match.index);
    end = match.index + match[0].length;
    const read = readVariable(match[1]!);
    if (!('variable' in read)) {
      literal += match[0];
      continue;
    }
    if (literal) segments.push({ kind: 'text', text: literal });
    literal = '';
    const { variable } = read;
    let number = numbers.get(variable.expression);
    if (number === undefined) {
      variables.push(variable);
      number = variables.length;
      numbers.set(variable.expression, number);
    }
    segments.push({ kind: 'variable', source: match[0], number, variable: variables[number - 1]! });
  }
  literal += body.slice(end);
  if (literal) segments.push({ kind: 'text', text: literal });
  return { segments, variables };
}

/** Checked when a template is added or synced and before a send. */
export function validateTemplateBody(body: string): { ok: true } | { ok: false; problems: string[] } {
  const problems: string[] = [];
  for (const match of body.matchAll(VARIABLE)) {
    const read = readVariable(match[1]!);
    if ('problem' in read) problems.push(`${match[0]} ${read.problem}`);
  }
  return problems.length ? { ok: false, problems } : { ok: true };
}

/** Lower-cased field names to values; own properties only, so `__proto__` is just a name. */
function fieldValues(fields: TemplateFields): Map<string, string> {
  const values = new Map<string, string>();
  if (!fields || typeof fields !== 'object') return values;
  for (const [name, value] of Object.entries(fields)) {
    if (typeof value !== 'string') continue;
    const key = name.toLowerCase();
    // When two names differ only in case, the lower-case one wins.
    if (!values.has(key) || name === key) values.set(key, value);
  }
  return values;
}

function applyTransform(value: string, transform: TemplateTransform | null): string {
  switch (transform) {
    case 'uppercase':
      return value.toUpperCase();
    case 'lowercase':
      return value.toLowerCase();
    case 'capitalize':
      return value.toLowerCase().replace(/(^|\s)(\S)/gu, (_, space: string, first: string) => space + first.toUpperCase());
    default:
      return value;
  }
}

function resolveVariable(variable: TemplateVariable, values: Map<string, string>): string {
  const value = values.get(variable.field);
  // Empty means missing, null, or only whitespace; any other value is kept over the default.
  const resolved = value !== undefined && value.trim() !== '' ? value : (variable.defaultValue ?? '');
  return applyTransform(resolved, variable.transform);
}

export function renderTemplate(body: string, fields: TemplateFields): RenderedTemplate {
  const { segments, variables } = parseTemplateBody(body);
  const values = fieldValues(fields);
  const parameters = variables.map((variable) => resolveVariable(variable, values));
  let numberedBody = '';
  let text = '';
  for (const segment of segments) {
    numberedBody += segment.kind === 'text' ? segment.text : `{{${segment.number}}}`;
    text += segment.kind === 'text' ? segment.text : parameters[segment.number - 1];
  }
  return { text, numberedBody, parameters };
}
