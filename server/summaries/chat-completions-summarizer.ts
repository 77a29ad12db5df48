// Summaries from an OpenAI-compatible chat-completions endpoint (SUMMARY_API_URL).
// A 4xx answer is final (the request itself is wrong: key, model, size) and is
// reported as SummaryRejectedError; anything else that fails throws a plain
// error so the job's own retries try again.
import { request } from 'undici';

const TIMEOUT_MS = 30_000;
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

/** `signal`: the job's own (aborted when the worker shuts down), besides the time-out. */
export async function summarizeWithChatCompletions(settings: ChatCompletionsSettings, transcript: string, signal?: AbortSignal): Promise<string> {
  const response = await request(chatCompletionsUrl(settings.url), {
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
    signal: signal ? AbortSignal.any([signal, AbortSignal.timeout(TIMEOUT_MS)]) : AbortSignal.timeout(TIMEOUT_MS),
  });
  const text = await response.body.text();
  if (response.statusCode >= 400 && response.statusCode < 500) {
    throw new SummaryRejectedError(response.statusCode, text.slice(0, 500));
  }
  if (response.statusCode < 200 || response.statusCode >= 300) {
    throw new Error(`The summary provider answered with status ${response.statusCode}`);
  }
  let content: unknown;
  try {
    content = (JSON.parse(text) as { choices?: { message?: { content?: unknown } }[] }).choices?.[0]?.message?.content;
  } catch {
    throw new Error('The summary provider answered with a body that is not JSON');
  }
  if (typeof content !== 'string' || !content.trim()) throw new Error('The summary provider answered without choices[0].message.content');
  return content.trim().slice(0, MAX_SUMMARY_CHARS);
}
