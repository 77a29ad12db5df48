// The JavaScript a visitor message's counting statement costs before PostgreSQL sees it:
// composing its five-bucket chain and the statement around it, and pg's check that a named
// statement's text is the one it prepared (a full comparison unless it is the same string).
// The pool answers at once with a counted row, so only the composition is timed.
//
//   node bench/micro/count-visitor-message.ts [checkout]   (another checkout to compare)
import path from 'node:path';

const tree = path.resolve(process.argv[2] ?? path.join(import.meta.dirname, '../..'));
const { countVisitorMessageReadingWidget } = (await import(path.join(tree, 'server/widgets/count-visitor-messages.ts'))) as typeof import('../../server/widgets/count-visitor-messages.ts');

// What pg keeps per connection: the text each statement name was prepared with, compared as pg's query.js does.
const prepared = new Map<string, string>();
const row = { rate_now: 0, rate_window: 0, rate_counted: true, found: true, settings: {}, identity_secret_sealed: null };
const pool = {
  query: async (statement: { name: string; text: string }) => {
    const previous = prepared.get(statement.name);
    if (previous === undefined) prepared.set(statement.name, statement.text);
    else if (previous !== statement.text) throw new Error('Prepared statements must be unique');
    return { rows: [row], rowCount: 1 };
  },
};
const limits = { WIDGET_REQUESTS_PER_IP_PER_MINUTE: 60, WIDGET_MESSAGES_PER_IP_PER_MINUTE: 30, WIDGET_NEW_VISITORS_PER_IP_PER_MINUTE: 10, WIDGET_MESSAGES_PER_VISITOR_PER_MINUTE: 20, WIDGET_MESSAGES_PER_WIDGET_PER_MINUTE: 600 };
const one = (i: number) =>
  countVisitorMessageReadingWidget(pool as never, limits, { accountId: 'usr_1', widgetId: 'wid_1', visitorKey: `visitor${i % 1000}`, address: `10.0.${i % 250}.1` });

for (let i = 0; i < 20_000; i++) await one(i);
for (let round = 0; round < 5; round++) {
  const started = process.cpuUsage();
  const N = 100_000;
  for (let i = 0; i < N; i++) await one(i);
  const used = process.cpuUsage(started);
  console.log(`${(((used.user + used.system) / N)).toFixed(2)} µs per counting statement (${tree})`);
}
