import { describe, it, expect } from 'vitest';
import fc from 'fast-check';
import {
  parseTemplateBody,
  renderTemplate,
  TEMPLATE_TRANSFORMS,
  validateTemplateBody,
  type TemplateFields,
} from '../../server/messaging/template-variables.ts';

const RUNS = { numRuns: 1000 };

/** Numbers of the `{{n}}` placeholders in order of appearance. */
function placeholderNumbers(numberedBody: string): number[] {
  return [...numberedBody.matchAll(/\{\{(\d+)\}\}/g)].map((match) => Number(match[1]));
}

function substitute(numberedBody: string, parameters: string[]): string {
  return numberedBody.replace(/\{\{(\d+)\}\}/g, (_, n: string) => parameters[Number(n) - 1]!);
}

// Bodies built from the pieces that make or break variables, mixed with arbitrary text.
const bodyPiece = fc.oneof(
  fc.constantFrom('{{', '}}', '{', '}', '|', ' ', 'first_name', 'FIRST_Name', 'email', 'uppercase', 'Capitalize', 'shout', 'Friend', '__proto__', 'constructor', '1', '{{1}}'),
  fc.string({ maxLength: 6 }),
  fc.string({ maxLength: 3, unit: 'grapheme' }),
);
const body = fc.array(bodyPiece, { maxLength: 40 }).map((pieces) => pieces.join(''));
const fieldName = fc.oneof(fc.constantFrom('first_name', 'First_Name', 'email', 'company', '__proto__', 'constructor', 'toString'), fc.string({ maxLength: 8 }));
const fieldValue = fc.oneof(fc.string({ maxLength: 12 }), fc.constant(null), fc.constant(undefined), fc.constantFrom('', '   ', '{{1}}', 'a|b'));
const fields: fc.Arbitrary<TemplateFields> = fc.dictionary(fieldName, fieldValue, { maxKeys: 6 });
const nonEmptyValue = fc.string({ minLength: 1, maxLength: 12 }).filter((value) => value.trim() !== '');
// A default as it can be written inside a variable: no braces or pipes, not a transform name.
const defaultText = fc
  .string({ minLength: 1, maxLength: 10 })
  .map((text) => text.replace(/[{}|]/g, '').trim())
  .filter((text) => text !== '' && !TEMPLATE_TRANSFORMS.some((name) => name === text.toLowerCase()));
const transform = fc.constantFrom(...TEMPLATE_TRANSFORMS);

describe('template variables, the spec rules', () => {
  it('{{field}} inserts the contact field (for example first_name, email, company)', () => {
    const rendered = renderTemplate('Hi {{first_name}} from {{ company }}, we wrote to {{email}}', {
      first_name: 'Ana',
      company: 'Acme',
      email: 'ana@example.com',
    });
    expect(rendered.text).toBe('Hi Ana from Acme, we wrote to ana@example.com');
  });

  it('looks field names up case-insensitively', () => {
    expect(renderTemplate('Hi {{First_Name}}', { FIRST_NAME: 'Ana' }).text).toBe('Hi Ana');
  });

  it('{{field|Default Text}} uses the default when the field is empty', () => {
    for (const value of [undefined, null, '', '   ']) {
      expect(renderTemplate('Hello {{first_name|there}}!', { first_name: value }).text).toBe('Hello there!');
    }
    expect(renderTemplate('Hello {{first_name|there}}!', {}).text).toBe('Hello there!');
    expect(renderTemplate('Hello {{first_name|there}}!', { first_name: 'Ana' }).text).toBe('Hello Ana!');
  });

  it('{{field|uppercase}}, {{field|lowercase}}, {{field|capitalize}} (first letter of each word) transform the value', () => {
    const contact = { name: 'mARY jane o\'neil' };
    expect(renderTemplate('{{name|uppercase}}', contact).text).toBe("MARY JANE O'NEIL");
    expect(renderTemplate('{{name|lowercase}}', contact).text).toBe("mary jane o'neil");
    expect(renderTemplate('{{name|capitalize}}', contact).text).toBe("Mary Jane O'neil");
    expect(renderTemplate('{{name|UpperCase}}', contact).text).toBe("MARY JANE O'NEIL");
  });

  it('{{field|Default Value|transformation}} combines default and transformation', () => {
    expect(renderTemplate('Hello {{first_name|there friend|capitalize}}', {}).text).toBe('Hello There Friend');
    expect(renderTemplate('Hello {{first_name|there|uppercase}}', { first_name: 'ana' }).text).toBe('Hello ANA');
  });

  it('named variables are converted to numbered placeholders for the messaging platform ({{1}}, {{2}}, ...)', () => {
    const rendered = renderTemplate('{{first_name}} at {{company|your company}}: {{ FIRST_NAME }} / {{first_name|uppercase}}', {
      first_name: 'ana',
    });
    expect(rendered).toEqual({
      numberedBody: '{{1}} at {{2}}: {{1}} / {{3}}',
      parameters: ['ana', 'your company', 'ANA'],
      text: 'ana at your company: ana / ANA',
    });
  });

  it('a single extra part is a default unless it names a transform', () => {
    const { variables } = parseTemplateBody('{{a|shout}} {{b| Lowercase }}');
    expect(variables.map(({ field, defaultValue, transform }) => ({ field, defaultValue, transform }))).toEqual([
      { field: 'a', defaultValue: 'shout', transform: null },
      { field: 'b', defaultValue: null, transform: 'lowercase' },
    ]);
  });

  it('leaves text that is not a well-formed variable as it is', () => {
    const body = 'a {{}} b {{ | x}} c {{first_name {{x|y|z|w}} {{name|Friend|shout}} {{first name}} {{{x}}} }}';
    const rendered = renderTemplate(body, { x: 'X', first_name: 'Ana' });
    expect(rendered.numberedBody).toBe('a {{}} b {{ | x}} c {{first_name {{x|y|z|w}} {{name|Friend|shout}} {{first name}} {{{1}}} }}');
    expect(rendered.text).toBe('a {{}} b {{ | x}} c {{first_name {{x|y|z|w}} {{name|Friend|shout}} {{first name}} {X} }}');
  });

  it('reads only own fields, so __proto__ and constructor are ordinary names', () => {
    const own = JSON.parse('{"__proto__": "proto value"}') as TemplateFields;
    expect(renderTemplate('{{__proto__}}|{{constructor|none}}|{{toString}}', own).parameters).toEqual(['proto value', 'none', '']);
  });
});

describe('validateTemplateBody', () => {
  it('reports an unknown transform, naming it and the variable', () => {
    const result = validateTemplateBody('Hi {{name|Friend|shout}}');
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.problems).toHaveLength(1);
    expect(result.problems[0]).toContain('shout');
    expect(result.problems[0]).toContain('{{name|Friend|shout}}');
  });

  it('reports empty field names and too many parts', () => {
    const result = validateTemplateBody('{{}} {{ |x}} {{a|b|c|d}}');
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.problems).toEqual([
      expect.stringContaining('empty field name'),
      expect.stringContaining('empty field name'),
      expect.stringContaining('4 parts'),
    ]);
  });

  it('accepts every form the spec allows', () => {
    expect(validateTemplateBody('{{a}} {{a|Friend}} {{a|uppercase}} {{a|Friend|capitalize}} {{ a.b-c_1 | x y | LOWERCASE }} no variables {')).toEqual({
      ok: true,
    });
  });
});

describe('template variables, properties', () => {
  it('never throws on arbitrary bodies and fields, and text is numberedBody with {{n}} replaced by parameters[n-1]', () => {
    fc.assert(
      fc.property(body, fields, (template, values) => {
        const rendered = renderTemplate(template, values);
        expect(rendered.text).toBe(substitute(rendered.numberedBody, rendered.parameters));
        validateTemplateBody(template);
      }),
      RUNS,
    );
  });

  it('numbers densely (exactly 1..parameters.length) in order of first appearance', () => {
    fc.assert(
      fc.property(body, fields, (template, values) => {
        const { numberedBody, parameters } = renderTemplate(template, values);
        const firstAppearances = [...new Set(placeholderNumbers(numberedBody))];
        expect(firstAppearances).toEqual(parameters.map((_, i) => i + 1));
      }),
      RUNS,
    );
  });

  it('numbers stably: rendering twice is the same, and field values do not change numberedBody', () => {
    fc.assert(
      fc.property(body, fields, fields, (template, values, otherValues) => {
        const rendered = renderTemplate(template, values);
        expect(renderTemplate(template, values)).toEqual(rendered);
        const other = renderTemplate(template, otherValues);
        expect(other.numberedBody).toBe(rendered.numberedBody);
        expect(other.parameters).toHaveLength(rendered.parameters.length);
      }),
      RUNS,
    );
  });

  it('matches a model of the five rules on generated well-formed templates', () => {
    const variable = fc.record({
      field: fc.constantFrom('first_name', 'email', 'company', 'a.b', 'x-1'),
      upperField: fc.boolean(),
      defaultValue: fc.option(defaultText, { nil: null }),
      transform: fc.option(transform, { nil: null }),
      padding: fc.constantFrom('', ' ', '  '),
    });
    const item = fc.oneof(variable, fc.string({ maxLength: 6 }).map((text) => text.replace(/[{}]/g, '')));
    const values = fc.dictionary(fc.constantFrom('first_name', 'email', 'company', 'a.b', 'x-1'), fc.option(fc.string({ maxLength: 8 }), { nil: undefined }));
    fc.assert(
      fc.property(fc.array(item, { maxLength: 12 }), values, (items, contact) => {
        let template = '';
        let expectedBody = '';
        const numbers = new Map<string, number>();
        const expectedParameters: string[] = [];
        for (const part of items) {
          if (typeof part === 'string') {
            template += part;
            expectedBody += part;
            continue;
          }
          const { field, upperField, defaultValue, transform, padding } = part;
          const written = [upperField ? field.toUpperCase() : field];
          if (defaultValue !== null) written.push(defaultValue);
          else if (transform !== null) written.push('');
          if (transform !== null) written.push(transform);
          template += `{{${written.map((piece) => padding + piece + padding).join('|')}}}`;
          const key = JSON.stringify([field, defaultValue, transform]);
          if (!numbers.has(key)) {
            numbers.set(key, numbers.size + 1);
            const value = contact[field];
            let resolved = value && value.trim() ? value : (defaultValue ?? '');
            if (transform === 'uppercase') resolved = resolved.toUpperCase();
            if (transform === 'lowercase') resolved = resolved.toLowerCase();
            if (transform === 'capitalize') resolved = resolved.toLowerCase().replace(/(^|\s)(\S)/gu, (_, s: string, c: string) => s + c.toUpperCase());
            expectedParameters.push(resolved);
          }
          expectedBody += `{{${numbers.get(key)}}}`;
        }
        expect(validateTemplateBody(template)).toEqual({ ok: true });
        const rendered = renderTemplate(template, contact);
        expect(rendered.numberedBody).toBe(expectedBody);
        expect(rendered.parameters).toEqual(expectedParameters);
      }),
      RUNS,
    );
  });

  it('applies the default only when the value is empty', () => {
    fc.assert(
      fc.property(nonEmptyValue, defaultText, (value, fallback) => {
        expect(renderTemplate(`{{first_name|${fallback}}}`, { first_name: value }).parameters).toEqual([value]);
      }),
      RUNS,
    );
    fc.assert(
      fc.property(fc.constantFrom(undefined, null, '', ' ', '\t\n '), defaultText, (value, fallback) => {
        expect(renderTemplate(`{{first_name|${fallback}}}`, { first_name: value }).parameters).toEqual([fallback]);
      }),
      RUNS,
    );
  });

  it('applies transforms to the value and to the default', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 20 }), fc.boolean(), defaultText, (raw, useDefault, fallback) => {
        const value = useDefault ? '' : raw;
        const source = value.trim() ? value : fallback;
        const [upper] = renderTemplate(`{{v|${fallback}|uppercase}}`, { v: value }).parameters;
        const [lower] = renderTemplate(`{{v|${fallback}|lowercase}}`, { v: value }).parameters;
        const [capitalized] = renderTemplate(`{{v|${fallback}|capitalize}}`, { v: value }).parameters;
        expect(upper).toBe(source.toUpperCase());
        expect(upper).not.toMatch(/[a-z]/);
        expect(lower).toBe(source.toLowerCase());
        expect(lower).not.toMatch(/[A-Z]/);
        expect(capitalized!.toLowerCase()).toBe(source.toLowerCase());
        for (const word of capitalized!.split(/\s+/).filter(Boolean)) {
          expect(word[0]).toBe(word[0]!.toUpperCase());
          expect(word.slice(1)).toBe(word.slice(1).toLowerCase());
        }
      }),
      RUNS,
    );
  });
});

describe('template variables, the edges a mutant would move', () => {
  it('names a malformed field name and an empty transform in the problem', () => {
    expect(validateTemplateBody('Hi {{first name}}')).toEqual({
      ok: false,
      problems: ['{{first name}} has field name "first name"; use only letters, digits, "_", "." and "-"'],
    });
    expect(validateTemplateBody('{{a|b|}}')).toEqual({ ok: false, problems: ['{{a|b|}} has an empty transform; use one of uppercase, lowercase, capitalize'] });
    expect(validateTemplateBody('{{a|b|shout}}')).toEqual({
      ok: false,
      problems: ['{{a|b|shout}} has unknown transform "shout"; use one of uppercase, lowercase, capitalize'],
    });
  });

  it('an empty default is no default: {{name|}} and {{name}} are one variable', () => {
    const parsed = parseTemplateBody('{{Name|}} and {{name}} and {{name||uppercase}}');
    expect(parsed.variables).toEqual([
      { field: 'name', defaultValue: null, transform: null, expression: 'name' },
      { field: 'name', defaultValue: null, transform: 'uppercase', expression: 'name||uppercase' },
    ]);
    expect(parsed.segments.map((segment) => (segment.kind === 'text' ? segment.text : segment.number))).toEqual([1, ' and ', 1, ' and ', 2]);
  });

  it('expressions keep every part that is present, so different defaults and transforms number apart', () => {
    const { variables } = parseTemplateBody('{{a|x}} {{a|x|lowercase}} {{a|lowercase}} {{a|y}} {{A|X}}');
    expect(variables.map((variable) => variable.expression)).toEqual(['a|x', 'a|x|lowercase', 'a||lowercase', 'a|y', 'a|X']);
    expect(variables[0]).toEqual({ field: 'a', defaultValue: 'x', transform: null, expression: 'a|x' });
  });

  it('segments hold the text between variables and no empty text', () => {
    expect(parseTemplateBody('{{a}}{{b}}').segments).toEqual([
      { kind: 'variable', source: '{{a}}', number: 1, variable: { field: 'a', defaultValue: null, transform: null, expression: 'a' } },
      { kind: 'variable', source: '{{b}}', number: 2, variable: { field: 'b', defaultValue: null, transform: null, expression: 'b' } },
    ]);
    expect(parseTemplateBody('x{{a}}y').segments.map((segment) => segment.kind)).toEqual(['text', 'variable', 'text']);
    expect(parseTemplateBody('').segments).toEqual([]);
    expect(parseTemplateBody('{{b}} {{a}} {{b}}').segments.filter((segment) => segment.kind === 'variable').map((segment) => [segment.number, segment.variable.field])).toEqual([
      [1, 'b'],
      [2, 'a'],
      [1, 'b'],
    ]);
  });

  it('fields that are not an object give every variable its default', () => {
    for (const fields of [null, undefined, 'text', 5]) {
      expect(renderTemplate('{{a|none}}', fields as never).text).toBe('none');
    }
  });

  it('when two field names differ only in case, the lower-case one wins whichever comes first', () => {
    expect(renderTemplate('{{name}}', { Name: 'upper', name: 'lower' }).text).toBe('lower');
    expect(renderTemplate('{{name}}', { name: 'lower', Name: 'upper' }).text).toBe('lower');
    expect(renderTemplate('{{name}}', { NAME: 'first', Name: 'second' }).text).toBe('first');
  });
});
