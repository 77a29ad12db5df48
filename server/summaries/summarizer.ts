// Which summarizer a process uses: the chat-completions endpoint when
// SUMMARY_API_URL is configured, the built-in extractive one otherwise.
import type { Config } from '../config.ts';
import type { Message } from '../db/entities/index.ts';
import { formatChat } from '../messages/export-chat.ts';
import type { OutboundClient } from '../outbound/http-client.ts';
import { summarizeWithChatCompletions } from './chat-completions-summarizer.ts';
import { summarizeExtractively } from './extractive-summarizer.ts';

/** Summarizes a conversation given oldest first; `signal` abandons a remote call (a worker shutting down). */
export type Summarizer = (messages: Message[], signal?: AbortSignal) => Promise<string>;

/** `client`: the process's outbound client for summaries (SUMMARY_TIMEOUT_MS). */
export function summarizerFor(config: Pick<Config, 'SUMMARY_API_URL' | 'SUMMARY_API_KEY' | 'SUMMARY_MODEL'>, client: OutboundClient): Summarizer {
  const url = config.SUMMARY_API_URL;
  if (!url) return async (messages) => summarizeExtractively(messages);
  const settings = { url, apiKey: config.SUMMARY_API_KEY, model: config.SUMMARY_MODEL };
  return (messages, signal) => summarizeWithChatCompletions(client, settings, formatChat(messages), signal);
}
