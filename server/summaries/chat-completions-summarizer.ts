// Summaries from an OpenAI-compatible chat-completions endpoint (SUMMARY_API_URL).
// A 4xx answer is final (the request itself is wrong: key, model, size) and is
// reported as SummaryRejectedError; anything else that fails throws a plain
// error so the job's own retries try again. The request goes through the
// outbound client (address guard, time-out, pooled connections).
import type { OutboundClient } from '../outbound/http-client.ts';

/** The time-out of the summary client's requests. */
export const SUMMARY_TIMEOUT_MS = 30_000;
/** The newest part of a long conversation is what the summary is about; older lines are dropped first. */
const MAX_TRANSCRIPT_CHARS = 40_000;
const MAX_SUMMARY_CHARS = 10_000;

const INSTRUCTIONS =
  "You summarize a conversation between a business (agent) and one of its contacts for the business's staff. " +
  'In at most five sentences, say what the contact wanted, what the business answered, and any open follow-up. ' +
  'Reply with the summary only.';

export type ChatCompletionsSettings = { url: string; apiKey?: string; model: string };

export class SummaryRejectedError extends Error {
  override name = 'SummaryRejectedError';
  readonly status: number;
  constructor(status: number, detail: string) {
    super(`The summary provider refused the request with status ${status}: ${detail}`);
    this.status = status;
  }
}

/** `{SUMMARY_API_URL}/chat/completions`, unless the URL already names that endpoint. */
export function chatCompletionsUrl(base: string): string {
  const trimmed = base.replace(/\/+$/, '');
  return trimmed.endsWith('/chat/completions') ? trimmed : `${trimmed}/chat/completions`;
}

function tail(transcript: string): string {
  if (transcript.length <= MAX_TRANSCRIPT_CHARS) return transcript;
  const cut = transcript.slice(transcript.length - MAX_TRANSCRIPT_CHARS);
  const firstLineBreak = cut.indexOf('\n');
  return firstLineBreak === -1 ? cut : cut.slice(firstLineBreak + 1);
}

/** `signal`: the job's own (aborted when the worker shuts down), besides the client's time-out. */
export async function summarizeWithChatCompletions(
  client: OutboundClient,
  settings: ChatCompletionsSettings,
  transcript: string,
  signal?: AbortSignal,
): Promise<string> {
  const response = await client.request(chatCompletionsUrl(settings.url), {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json',
      ...(settings.apiKey ? { authorization: `Bearer ${settings.apiKey}` } : {}),
    },
    body: JSON.stringify({
      model: settings.model,
      temperature: 0.2,
      messages: [
        { role: 'system', content: INSTRUCTIONS },
        { role: 'user', content: tail(transcript) || '(no messages yet)' },
      ],
    }),
    signal,
  });
  const status = response.statusCode;
  if (status === null) throw new Error(`The summary provider could not be reached: ${response.failure?.message ?? 'no answer'}`);
  if (status >= 400 && status < 500) throw new SummaryRejectedError(status, (response.body ?? '').slice(0, 500));
  if (status < 200 || status >= 300) throw new Error(`The summary provider answered with status ${status}`);
  let content: unknown;
  try {
    content = (JSON.parse(response.body ?? '') as { choices?: { message?: { content?: unknown } }[] }).choices?.[0]?.message?.content;
  } catch {
    throw new Error('The summary provider answered with a body that is not JSON');
  }
  if (typeof content !== 'string' || !content.trim()) throw new Error('The summary provider answered without choices[0].message.content');
  return content.trim().slice(0, MAX_SUMMARY_CHARS);
}
