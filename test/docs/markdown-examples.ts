// Reads the fenced examples of a markdown guide and what they show: the blocks, the steps of
// a shell block with the answers shown after them, and the comparison of a shown answer with
// what a command printed. docs/development.md ("Examples that run") describes the notation.

/** Languages whose blocks must run (marked `run`) or be shown as console/text instead. */
export const RUNNABLE_LANGUAGES = new Set(['sh', 'bash', 'shell', 'ts', 'typescript']);

export type Block = {
  file: string;
  /** 1-based line of the opening fence. */
  line: number;
  language: string;
  run: boolean;
  /** The block's lines, without the fence's indentation. */
  lines: string[];
};

export type Step = {
  /** 1-based line in the markdown file of the step's first command line. */
  line: number;
  commands: string[];
  /** The answer shown after the commands, joined from its comment lines; undefined when none. */
  shown?: string;
};

const FENCE = /^(\s*)(`{3,})\s*([\w-]*)\s*(.*)$/;

export function readBlocks(file: string, markdown: string): Block[] {
  const blocks: Block[] = [];
  const lines = markdown.split('\n');
  for (let index = 0; index < lines.length; index++) {
    const open = FENCE.exec(lines[index]!);
    if (!open) continue;
    const [, indent, ticks, language, info] = open;
    const body: string[] = [];
    let end = index + 1;
    for (; end < lines.length; end++) {
      const line = lines[end]!;
      if (line.trim() === ticks) break;
      body.push(line.startsWith(indent!) ? line.slice(indent!.length) : line.trimStart());
    }
    blocks.push({ file, line: index + 1, language: language!, run: /\brun\b/.test(info!), lines: body });
    index = end;
  }
  return blocks;
}

/** An answer line: `# {…}`, `# [ … ]`, `# 201 {…}`, or plain text right after a command. */
const COMMENT = /^#(?: (.*))?$/;

/**
 * Splits a shell block into steps: a run of command lines, then the answer shown in the
 * comment lines right after it. A comment after a blank line (or at the top) introduces
 * what follows and is not an answer. A JSON answer continues on the comment lines after it
 * until its brackets close.
 */
export function readSteps(block: Block): Step[] {
  const steps: Step[] = [];
  let current: Step | undefined;
  let answerOpen = false;
  block.lines.forEach((line, offset) => {
    const comment = COMMENT.exec(line);
    if (line.trim() === '') {
      current = undefined;
      answerOpen = false;
      return;
    }
    if (comment) {
      const text = comment[1] ?? '';
      if (current && current.shown === undefined && current.commands.length) {
        current.shown = text;
        answerOpen = !jsonComplete(text);
      } else if (current && answerOpen) {
        current.shown += ` ${text.trim()}`;
        answerOpen = !jsonComplete(current.shown!);
      } else {
        current = undefined;
      }
      return;
    }
    if (!current || current.shown !== undefined) {
      current = { line: block.line + 1 + offset, commands: [] };
      steps.push(current);
      answerOpen = false;
    }
    current.commands.push(line);
  });
  return steps;
}

/** `console.log(…); // shown` lines of a TypeScript block: what its output must contain, in order. */
export function shownLogLines(block: Block): string[] {
  return block.lines.flatMap((line) => {
    const match = /console\.log\(.*\);\s*\/\/\s*(.+)$/.exec(line);
    return match ? [match[1]!.trim()] : [];
  });
}

export type ShownAnswer = { status?: number; json?: unknown; text?: string };

const MORE = '\u2026';
/** What `…` becomes where a value or member stands, so the shown answer parses as JSON. */
const MORE_MEMBER = `"${MORE}":true`;
const MORE_ITEM = `"${MORE}"`;

export function parseShown(shown: string): ShownAnswer {
  const status = /^(\d{3})\s+(?=[[{])/.exec(shown);
  const rest = status ? shown.slice(status[0].length) : shown;
  if (!/^[[{]/.test(rest)) return { text: shown.trim() };
  // Rewrites bare `…` by its container; stops where the outermost value closes (what follows
  // is a note for the reader, such as "(the recorded message's id)").
  let json = '';
  const containers: string[] = [];
  let inString = false;
  for (let index = 0; index < rest.length; index++) {
    const char = rest[index]!;
    if (inString) {
      json += char;
      if (char === '\\') json += rest[++index] ?? '';
      else if (char === '"') inString = false;
      continue;
    }
    if (char === '"') inString = true;
    if (char === MORE) {
      json += containers.at(-1) === '{' ? MORE_MEMBER : MORE_ITEM;
      continue;
    }
    json += char;
    if (char === '{' || char === '[') containers.push(char);
    if (char === '}' || char === ']') {
      containers.pop();
      if (!containers.length) break;
    }
  }
  return { status: status ? Number(status[1]) : undefined, json: JSON.parse(json) };
}

function jsonComplete(shown: string): boolean {
  const rest = shown.replace(/^\d{3}\s+/, '');
  if (!/^[[{]/.test(rest)) return true;
  try {
    parseShown(shown);
    return true;
  } catch {
    return false;
  }
}

/**
 * Where `actual` differs from the shown shape, as "path: what" lines (none when it matches).
 * Strings match exactly, `…` standing for any run of characters; numbers by type; booleans
 * and null exactly; an object has the shown keys and no others unless `…` is a member; an
 * array has the shown items, `[…]` being any array and a trailing `…` allowing more.
 */
export function shapeDifferences(shown: unknown, actual: unknown, path = '$'): string[] {
  if (typeof shown === 'string') {
    if (typeof actual !== 'string') return [`${path}: expected a string, got ${JSON.stringify(actual)}`];
    return textMatches(shown, actual) ? [] : [`${path}: expected ${JSON.stringify(shown)}, got ${JSON.stringify(actual)}`];
  }
  if (typeof shown === 'number') return typeof actual === 'number' ? [] : [`${path}: expected a number, got ${JSON.stringify(actual)}`];
  if (shown === null || typeof shown === 'boolean') return actual === shown ? [] : [`${path}: expected ${shown}, got ${JSON.stringify(actual)}`];
  if (Array.isArray(shown)) {
    if (!Array.isArray(actual)) return [`${path}: expected an array, got ${JSON.stringify(actual)}`];
    const more = shown.at(-1) === MORE;
    const items = more ? shown.slice(0, -1) : shown;
    if (actual.length < items.length || (!more && actual.length !== items.length)) {
      return [`${path}: expected ${more ? 'at least ' : ''}${items.length} items, got ${actual.length}`];
    }
    return items.flatMap((item, index) => shapeDifferences(item, actual[index], `${path}[${index}]`));
  }
  if (typeof shown === 'object') {
    if (typeof actual !== 'object' || actual === null || Array.isArray(actual)) return [`${path}: expected an object, got ${JSON.stringify(actual)}`];
    const expected = shown as Record<string, unknown>;
    const got = actual as Record<string, unknown>;
    const differences = Object.keys(expected)
      .filter((key) => key !== MORE)
      .flatMap((key) => (key in got ? shapeDifferences(expected[key], got[key], `${path}.${key}`) : [`${path}.${key}: missing`]));
    if (!(MORE in expected)) for (const key of Object.keys(got)) if (!(key in expected)) differences.push(`${path}.${key}: not shown`);
    return differences;
  }
  return [`${path}: cannot compare ${JSON.stringify(shown)}`];
}

/** `…` stands for any run of characters; everything else is literal. */
export function textMatches(shown: string, actual: string): boolean {
  const pattern = shown.split(MORE).map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('[\\s\\S]*');
  return new RegExp(`^${pattern}$`).test(actual);
}
