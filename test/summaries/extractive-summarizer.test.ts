// The built-in summarizer: counts by direction, then the most representative sentences in order.
import { describe, expect, test } from 'vitest';
import { chatCompletionsUrl } from '../../server/summaries/chat-completions-summarizer.ts';
import { summarizeExtractively, type SummarizedMessage } from '../../server/summaries/extractive-summarizer.ts';

const conversation: SummarizedMessage[] = [
  { direction: 'inbound', body: 'Hi! My order 1234 has not arrived yet. Can you check the order status?' },
  { direction: 'outbound', body: 'Sorry about that. Your order 1234 shipped on Monday and arrives Friday.' },
  { direction: 'inbound', body: 'Thanks. Can I change the delivery address for the order?' },
  { direction: 'outbound-api', body: 'Yes, reply with the new delivery address.' },
  { direction: 'inbound', body: 'ok' },
];

describe('extractive summarizer', () => {
  test('prefixes the counts of inbound and outbound messages and keeps the three highest-scoring sentences in conversation order', () => {
    expect(summarizeExtractively(conversation)).toBe(
      '5 messages (3 inbound, 2 outbound). Key points: [contact] My order 1234 has not arrived yet. ' +
        '[agent] Your order 1234 shipped on Monday and arrives Friday. [contact] Can I change the delivery address for the order?',
    );
  });

  test('is deterministic: the same conversation gives the same summary', () => {
    expect(summarizeExtractively([...conversation])).toBe(summarizeExtractively([...conversation]));
  });

  test('a conversation without meaningful sentences is summarized by its counts alone', () => {
    expect(summarizeExtractively([])).toBe('0 messages (0 inbound, 0 outbound).');
    expect(summarizeExtractively([{ direction: 'inbound', body: 'ok thanks' }])).toBe('1 message (1 inbound, 0 outbound).');
  });

  test('long sentences are clipped and repeated sentences count once', () => {
    const long = `Please ${'really '.repeat(60)}hurry with the refund`;
    const summary = summarizeExtractively([
      { direction: 'inbound', body: long },
      { direction: 'inbound', body: 'Refund please' },
      { direction: 'inbound', body: 'Refund please' },
    ]);
    expect(summary).toBe(`3 messages (3 inbound, 0 outbound). Key points: [contact] ${long.slice(0, 199).trimEnd()}… [contact] Refund please.`);
  });
});

describe('chat-completions URL', () => {
  test('appends /chat/completions to SUMMARY_API_URL unless the URL already ends with it', () => {
    expect(chatCompletionsUrl('http://127.0.0.1:9/v1')).toBe('http://127.0.0.1:9/v1/chat/completions');
    expect(chatCompletionsUrl('http://127.0.0.1:9/v1/')).toBe('http://127.0.0.1:9/v1/chat/completions');
    expect(chatCompletionsUrl('https://llm.example/v1/chat/completions')).toBe('https://llm.example/v1/chat/completions');
  });
});
