// The built-in summarizer: deterministic and offline. It counts the messages
// by direction and keeps the few sentences whose words recur most in the
// conversation (word-frequency scoring), in their original order.
export type SummarizedMessage = { direction: 'inbound' | 'outbound' | 'outbound-api'; body: string };

const KEY_POINTS = 3;
const MAX_POINT_LENGTH = 200;

// Words too common to say what a conversation is about.
const STOP_WORDS = new Set(
  ('a about above after again all am an and any are as at be because been before being below between both but by can could did do does ' +
    'doing down during each few for from further had has have having he her here hers him his how i if in into is it its itself just me ' +
    'more most my no nor not now of off on once only or other our ours out over own same she should so some such than that the their ' +
    'them then there these they this those through to too under until up very was we were what when where which while who whom why will ' +
    'with would you your yours hi hello hey thanks thank please ok okay yes yeah sure im its dont ill ive youre')
    .split(' '),
);

function words(text: string): string[] {
  return (text.toLowerCase().match(/[\p{L}\p{N}']+/gu) ?? []).map((word) => word.replace(/'/g, '')).filter((word) => word.length > 1 && !STOP_WORDS.has(word));
}

function sentencesOf(body: string): string[] {
  return body
    .split(/(?<=[.!?])\s+|[\r\n]+/)
    .map((sentence) => sentence.replace(/\s+/g, ' ').trim())
    .filter(Boolean);
}

function clip(sentence: string): string {
  const clipped = sentence.length > MAX_POINT_LENGTH ? `${sentence.slice(0, MAX_POINT_LENGTH - 1).trimEnd()}…` : sentence;
  return /[.!?…]$/.test(clipped) ? clipped : `${clipped}.`;
}

/** `N messages (I inbound, O outbound).` */
export function countLine(messages: SummarizedMessage[]): string {
  const inbound = messages.filter((message) => message.direction === 'inbound').length;
  const total = messages.length;
  return `${total} ${total === 1 ? 'message' : 'messages'} (${inbound} inbound, ${total - inbound} outbound).`;
}

/** The most representative sentences, each labelled with who wrote it, in conversation order. */
export function keyPoints(messages: SummarizedMessage[], count = KEY_POINTS): string[] {
  const candidates: { text: string; speaker: string; words: string[]; position: number }[] = [];
  const seen = new Set<string>();
  for (const message of messages) {
    const speaker = message.direction === 'inbound' ? 'contact' : 'agent';
    for (const text of sentencesOf(message.body)) {
      const key = text.toLowerCase();
      const sentenceWords = words(text);
      if (sentenceWords.length === 0 || seen.has(key)) continue;
      seen.add(key);
      candidates.push({ text, speaker, words: sentenceWords, position: candidates.length });
    }
  }
  const frequency = new Map<string, number>();
  for (const candidate of candidates) for (const word of candidate.words) frequency.set(word, (frequency.get(word) ?? 0) + 1);
  // Dividing by the square root of the length rewards recurring words without favouring long sentences outright.
  const scored = candidates.map((candidate) => ({
    ...candidate,
    score: candidate.words.reduce((sum, word) => sum + (frequency.get(word) ?? 0), 0) / Math.sqrt(candidate.words.length),
  }));
  return scored
    .sort((a, b) => b.score - a.score || a.position - b.position)
    .slice(0, count)
    .sort((a, b) => a.position - b.position)
    .map((candidate) => `[${candidate.speaker}] ${clip(candidate.text)}`);
}

export function summarizeExtractively(messages: SummarizedMessage[]): string {
  const points = keyPoints(messages);
  return points.length ? `${countLine(messages)} Key points: ${points.join(' ')}` : countLine(messages);
}
