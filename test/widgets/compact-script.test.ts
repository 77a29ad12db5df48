// The embed script as served (server/http/compact-script.ts): comment lines and indentation
// go, every code line stays as written, and a source the rule cannot compact safely is refused.
import { readFile } from 'node:fs/promises';
import { expect, test } from 'vitest';
import { compactScript } from '../../server/http/compact-script.ts';

test('comment lines, comment blocks on their own lines, blank lines and indentation go; code lines stay whole', () => {
  const source = [
    '// A header.',
    '(function () {',
    '  /**',
    '   * What it does.',
    '   */',
    "  var url = 'https://example.com/x'; // kept: a trailing comment on a code line",
    '',
    '  /* one line */',
    '  var product = 2',
    '    * 3;',
    '})();',
  ].join('\n');
  expect(compactScript(source)).toBe(["(function () {", "var url = 'https://example.com/x'; // kept: a trailing comment on a code line", 'var product = 2', '* 3;', '})();', ''].join('\n'));
});

test('a template literal in code, code after a block comment, or a block that never ends is refused', () => {
  expect(() => compactScript('var a = `x\n  y`;')).toThrow(/template literal/);
  expect(() => compactScript('/* a */ var b = 1;')).toThrow(/code after a block comment/);
  expect(() => compactScript('/*\n * a\n */ var c = 1;')).toThrow(/code after a block comment/);
  expect(() => compactScript('/*\n * never ends')).toThrow(/does not end/);
});

test('the embed script compacts to code that parses and keeps every code line of the file', async () => {
  const source = await readFile(new URL('../../widget/chat-widget.js', import.meta.url), 'utf8');
  const served = compactScript(source);
  expect(() => new Function(served)).not.toThrow();
  const codeLines = source.split('\n').map((line) => line.trim()).filter((line) => line && !line.startsWith('//') && !line.startsWith('/*') && !line.startsWith('*'));
  expect(served.split('\n').filter(Boolean)).toEqual(codeLines);
});
