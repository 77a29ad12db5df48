// The text colours a chat widget draws on its owner's colours (server/widgets/widget-colours.ts):
// WCAG 2 contrast, and a choice that reaches 4.5:1 on every colour an owner may set.
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { contrastRatio, MINIMUM_TEXT_CONTRAST, readableOn, relativeLuminance, widgetForeground } from '../../server/widgets/widget-colours.ts';

const hexColour = fc
  .tuple(fc.integer({ min: 0, max: 255 }), fc.integer({ min: 0, max: 255 }), fc.integer({ min: 0, max: 255 }))
  .map((rgb) => `#${rgb.map((channel) => channel.toString(16).padStart(2, '0')).join('')}`);

describe('WCAG 2 contrast', () => {
  test('matches the published values', () => {
    expect(relativeLuminance('#000000')).toBe(0);
    expect(relativeLuminance('#ffffff')).toBe(1);
    expect(contrastRatio('#000', '#fff')).toBe(21);
    expect(contrastRatio('#ffffff', '#ffffff')).toBe(1);
    // #767676 is the lightest grey that passes AA on white.
    expect(contrastRatio('#767676', '#ffffff')).toBeCloseTo(4.54, 2);
    expect(contrastRatio('#777777', '#ffffff')).toBeLessThan(4.5);
    // White on a yellow brand colour is unreadable.
    expect(contrastRatio('#ffffff', '#facc15')).toBeCloseTo(1.53, 2);
    // Short and translucent forms: #fff8 is white at about half opacity, drawn over white.
    expect(contrastRatio('#0008', '#fff')).toBeCloseTo(contrastRatio('#777777', '#fff'), 1);
    expect(contrastRatio('#abc', '#aabbcc')).toBe(1);
  });
});

describe('the widget\'s text colours', () => {
  test('dark text on a yellow brand colour, white on the default blue', () => {
    expect(widgetForeground({ primary: '#facc15' })).toMatchObject({ primary: '#111827', visitorBubble: '#111827' });
    expect(widgetForeground({})).toEqual({ primary: '#ffffff', visitorBubble: '#ffffff', botBubble: '#111827', background: '#111827', muted: '#6b7280' });
  });

  test("keep the owner's text colour where it is readable, and replace it where it is not", () => {
    expect(widgetForeground({ background: '#ffffff', text: '#0f766e' }).background).toBe('#0f766e');
    const dark = widgetForeground({ background: '#111827', text: '#222222' });
    expect(dark.background).toBe('#ffffff');
    expect(dark.muted).toBe('#ffffff');
    expect(dark.botBubble).toBe('#222222');
  });

  test('reach 4.5:1 on any colours an owner sets', () => {
    fc.assert(
      fc.property(hexColour, hexColour, hexColour, hexColour, hexColour, (primary, background, text, visitorBubble, botBubble) => {
        const foreground = widgetForeground({ primary, background, text, visitorBubble, botBubble });
        expect(contrastRatio(foreground.primary, primary)).toBeGreaterThanOrEqual(MINIMUM_TEXT_CONTRAST);
        expect(contrastRatio(foreground.visitorBubble, visitorBubble)).toBeGreaterThanOrEqual(MINIMUM_TEXT_CONTRAST);
        expect(contrastRatio(foreground.botBubble, botBubble)).toBeGreaterThanOrEqual(MINIMUM_TEXT_CONTRAST);
        expect(contrastRatio(foreground.background, background)).toBeGreaterThanOrEqual(MINIMUM_TEXT_CONTRAST);
        expect(contrastRatio(foreground.muted, background)).toBeGreaterThanOrEqual(MINIMUM_TEXT_CONTRAST);
      }),
    );
  });

  test('readableOn keeps a readable preference and otherwise picks the better of near-black and white', () => {
    expect(readableOn('#ffffff', '#2563eb')).toBe('#2563eb');
    expect(readableOn('#facc15', '#ffffff')).toBe('#111827');
    expect(readableOn('#1e3a8a', '#111827')).toBe('#ffffff');
    // A mid-tone on which neither near-black nor white reaches 4.5:1.
    expect(contrastRatio('#111827', '#7a7a7a')).toBeLessThan(4.5);
    expect(contrastRatio('#ffffff', '#7a7a7a')).toBeLessThan(4.5);
    expect(readableOn('#7a7a7a', '#ffffff')).toBe('#000000');
  });
});
