// The set-up the widget operations share: an API process on the counting database with the
// per-address widget limits out of the way (the load comes from one address), one seeded
// account, its chat widgets, and a JSON caller for the service.
import { Agent, request } from 'undici';
import { seedAccounts } from '../database.ts';
import { root } from '../processes.ts';
import { startApiProcess, type StartedServer } from '../scenarios/servers.ts';

export type CallService = (method: string, pathname: string, body?: unknown, apiKey?: string) => Promise<{ data: Record<string, unknown> }>;
export type WidgetService = { service: StartedServer; call: CallService; widgets: string[]; owner: string };

const insecure = new Agent({ connect: { rejectUnauthorized: false }, connections: 8 });
const MANY = '10000000';

/**
 * `settings`: every widget's settings (default ones unless given); `env`: more of the
 * service's environment (a round-trip counter's, say); `tree`: the checkout the service runs
 * from (another branch's, to compare).
 */
export async function startWidgetService(
  url: string,
  widgetCount: number,
  settings: Record<string, unknown> = {},
  env: Record<string, string> = {},
  tree = root,
): Promise<WidgetService> {
  const { targets } = await seedAccounts(url, 1);
  const limits = {
    WIDGET_REQUESTS_PER_IP_PER_MINUTE: MANY,
    WIDGET_MESSAGES_PER_IP_PER_MINUTE: MANY,
    WIDGET_NEW_VISITORS_PER_IP_PER_MINUTE: MANY,
    WIDGET_SOCKETS_PER_IP: MANY,
  };
  const service = await startApiProcess(url, { ...limits, ...env }, [], tree);
  const call: CallService = async (method, pathname, body, apiKey) => {
    const response = await request(service.origin + pathname, {
      method: method as 'GET',
      dispatcher: insecure,
      headers: { 'content-type': 'application/json', ...(apiKey ? { 'x-api-key': apiKey } : {}) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.body.text();
    if (response.statusCode >= 300) throw new Error(`${method} ${pathname}: ${response.statusCode} ${text}`);
    return JSON.parse(text) as { data: Record<string, unknown> };
  };
  const widgets: string[] = [];
  for (let index = 0; index < widgetCount; index++) widgets.push(String((await call('POST', '/v1/chat-widgets', { name: `w${index}`, settings }, targets[0]!.apiKey)).data.id));
  const owner = String((await call('GET', `/v1/chat-widget-config?configId=${widgets[0]}`)).data.userId);
  return { service, call, widgets, owner };
}
