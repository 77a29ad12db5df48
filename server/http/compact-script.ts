// The embed script as a site loads it on every page view: the file in widget/ without its
// comment lines and indentation, so its explanations stay in the source and cost no page
// view anything. Only whole lines go: a line that is a `//` comment, a `/* ... */` block
// that starts and ends its own lines, and each line's leading white space. Code lines stay
// as they are, trailing comments included (a `//` inside a string stays a string); the
// source must not hold a template literal or any string spanning lines, which this refuses.

export function compactScript(source: string): string {
  const kept: string[] = [];
  let inBlock = false;
  for (const line of source.split('\n')) {
    const text = line.trim();
    if (inBlock) {
      if (text.endsWith('*/')) inBlock = false;
      else if (text.includes('*/')) throw new Error(`compactScript: code after a block comment: ${text}`);
      continue;
    }
    if (text === '' || text.startsWith('//')) continue;
    if (text.startsWith('/*')) {
      if (text.endsWith('*/')) continue;
      if (text.includes('*/')) throw new Error(`compactScript: code after a block comment: ${text}`);
      inBlock = true;
      continue;
    }
    if (text.includes('`')) throw new Error(`compactScript: a template literal: ${text}`);
    kept.push(text);
  }
  if (inBlock) throw new Error('compactScript: a block comment does not end');
  return `${kept.join('\n')}\n`;
}
