// The text colours a chat widget draws on its owner's colours, chosen once here for the
// widget page and the embed script's launcher: each reaches WCAG 2's 4.5:1 contrast for
// normal text (the owner's own text colour where it does, else near-black or white,
// whichever contrasts more), so a light brand colour such as #facc15 gets dark text.
// The page (widget/widget-config.js) and the launcher (chat-widget.js) get them with the public
// configuration rather than computing them twice.
import { z } from 'zod';
import type { WidgetSettings } from './widget-settings.ts';

/** What the widget page draws where the owner sets no colour (its stylesheet's defaults). */
export const DEFAULT_WIDGET_COLOURS = {
  primary: '#2563eb',
  background: '#ffffff',
  text: '#111827',
  botBubble: '#f1f5f9',
  /** Times, the greeting and other secondary text. */
  muted: '#6b7280',
} as const;

const DARK = DEFAULT_WIDGET_COLOURS.text;
const WHITE = '#ffffff';
const BLACK = '#000000';
/** WCAG 2 success criterion 1.4.3 (AA) for normal text; icons beside text are held to it too. */
export const MINIMUM_TEXT_CONTRAST = 4.5;

/** A CSS hex colour as sRGB channels 0-255; a translucent one as drawn over white. */
function channels(hex: string): [number, number, number] {
  let digits = hex.slice(1);
  if (digits.length <= 4) digits = [...digits].map((digit) => digit + digit).join('');
  const alpha = digits.length === 8 ? Number.parseInt(digits.slice(6, 8), 16) / 255 : 1;
  const rgb = [0, 2, 4].map((at) => Number.parseInt(digits.slice(at, at + 2), 16));
  return rgb.map((value) => value * alpha + 255 * (1 - alpha)) as [number, number, number];
}

/** WCAG 2 relative luminance of a CSS hex colour. */
export function relativeLuminance(hex: string): number {
  const [r, g, b] = channels(hex).map((value) => {
    const c = value / 255;
    return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  }) as [number, number, number];
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

/** WCAG 2 contrast ratio of two CSS hex colours, from 1 to 21. */
export function contrastRatio(first: string, second: string): number {
  const [lighter, darker] = [relativeLuminance(first), relativeLuminance(second)].sort((a, b) => b - a) as [number, number];
  return (lighter + 0.05) / (darker + 0.05);
}

/**
 * `preferred` when it reaches 4.5:1 on `background`, else near-black or white, whichever
 * contrasts more; on the mid-tones where neither does, black (black or white always does).
 */
export function readableOn(background: string, preferred: string): string {
  if (contrastRatio(preferred, background) >= MINIMUM_TEXT_CONTRAST) return preferred;
  const better = contrastRatio(DARK, background) >= contrastRatio(WHITE, background) ? DARK : WHITE;
  return contrastRatio(better, background) >= MINIMUM_TEXT_CONTRAST ? better : BLACK;
}

/** The text colour for each of the colours a widget draws (its settings' or the defaults). */
export const WidgetForeground = z
  .object({
    primary: z.string().describe('On `primary`: the header, the send button, the launcher.'),
    visitorBubble: z.string().describe("On the visitor's bubbles."),
    botBubble: z.string().describe("On the replies' bubbles."),
    background: z.string().describe('On the page background.'),
    muted: z.string().describe('Secondary text (times, the greeting) on the page background.'),
  })
  .describe(
    "The text colour for each colour the widget draws (its settings' or the defaults), as CSS hex: the widget's `text` colour where it reaches WCAG 2's 4.5:1 contrast, else near-black or white, whichever contrasts more.",
  );
export type WidgetForeground = z.infer<typeof WidgetForeground>;

export function widgetForeground(colors: WidgetSettings['colors'] = {}): WidgetForeground {
  const primary = colors.primary ?? DEFAULT_WIDGET_COLOURS.primary;
  const background = colors.background ?? DEFAULT_WIDGET_COLOURS.background;
  const text = colors.text ?? DEFAULT_WIDGET_COLOURS.text;
  const onBackground = readableOn(background, text);
  return {
    primary: readableOn(primary, WHITE),
    visitorBubble: readableOn(colors.visitorBubble ?? primary, WHITE),
    botBubble: readableOn(colors.botBubble ?? DEFAULT_WIDGET_COLOURS.botBubble, text),
    background: onBackground,
    muted: contrastRatio(DEFAULT_WIDGET_COLOURS.muted, background) >= MINIMUM_TEXT_CONTRAST ? DEFAULT_WIDGET_COLOURS.muted : onBackground,
  };
}
