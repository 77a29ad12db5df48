// The shared writers' statements read what they look up by key, with thousands of accounts:
// the event writer reads its accounts by primary key (not a scan of every account), POST
// /contacts reads the lists it names by primary key, a message's session read finds the last
// message on the session and reads no messages, and a visitor's first message reads none for
// the bot's recent replies either. Checked on the plans PostgreSQL makes, both the plan for
// the values at hand and the generic one a prepared statement settles on.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { insertContactStatement } from '../../server/contacts/sql/insert-contact.ts';
import { newId } from '../../server/db/ids.ts';
import { sql, type Sql } from '../../server/db/sql.ts';
import { eventsOf, insertEventsSql, newEventRow } from '../../server/events/sql/insert-events.ts';
import { sessionQuery } from '../../server/messages/sql/insert-message.ts';
import { visitorSessionSql } from '../../server/widgets/sql/store-visitor-message.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';

/** Enough accounts (each with a list) that scanning them all costs more than a key lookup. */
const ACCOUNTS = 3000;

type PlanNode = { 'Node Type': string; 'Relation Name'?: string; 'Actual Loops'?: number; Plans?: PlanNode[] };

function nodes(plan: PlanNode): PlanNode[] {
  return [plan, ...(plan.Plans ?? []).flatMap(nodes)];
}

describe("the writers' plans", () => {
  let database: TestDatabase;
  let client: pg.Client;
  let accountId: string;
  let listId: string;

  /** Every node of the statement's plan; `analyze` runs it (inside a rolled-back transaction). */
  async function planNodes(statement: Sql, options: { analyze?: boolean } = {}): Promise<PlanNode[]> {
    const { text, values } = statement.statement();
    await client.query('begin');
    try {
      const { rows } = await client.query<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>({
        text: `explain (format json${options.analyze ? ', analyze' : ''}) ${text}`,
        values,
      });
      return nodes(rows[0]!['QUERY PLAN'][0].Plan);
    } finally {
      await client.query('rollback');
    }
  }

  /** The same for the generic plan, the one a prepared statement reuses once it is no dearer than planning again. */
  async function genericPlanNodes(statement: Sql): Promise<PlanNode[]> {
    const { rows } = await client.query<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(`explain (format json, generic_plan) ${statement.text}`);
    return nodes(rows[0]!['QUERY PLAN'][0].Plan);
  }

  const scansOf = (plan: PlanNode[], relation: string) => plan.filter((node) => node['Node Type'] === 'Seq Scan' && node['Relation Name'] === relation);

  beforeAll(async () => {
    database = await createTestDatabase();
    client = new pg.Client({ connectionString: database.url });
    await client.connect();
    const run = Date.now().toString(36);
    await client.query(
      `insert into accounts (id, email) select 'usr_plan_' || $1 || '_' || n, 'plan-' || $1 || '-' || n || '@example.com' from generate_series(1, $2::int) n`,
      [run, ACCOUNTS],
    );
    await client.query(`insert into lists (id, account_id, name) select 'lst_plan_' || $1 || '_' || n, 'usr_plan_' || $1 || '_' || n, 'List' from generate_series(1, $2::int) n`, [
      run,
      ACCOUNTS,
    ]);
    await client.query('analyze accounts, lists');
    accountId = `usr_plan_${run}_7`;
    listId = `lst_plan_${run}_7`;
  });
  afterAll(async () => {
    await client?.end();
    await database?.drop();
  });

  test('the event writer reads its accounts by primary key', async () => {
    const events = eventsOf(accountId, [newEventRow('Contact Created', { contact: { id: newId('ct') } })]);
    for (const plan of [await planNodes(insertEventsSql(events)), await genericPlanNodes(insertEventsSql(events))]) {
      expect(scansOf(plan, 'accounts')).toEqual([]);
      expect(plan.some((node) => node['Relation Name'] === 'accounts')).toBe(true);
    }
  });

  test('POST /contacts reads the lists it names, and the account, by primary key', async () => {
    const contactId = newId('ct');
    const statement = insertContactStatement(
      {
        id: contactId,
        accountId,
        phoneNumber: '+14155550100',
        email: null,
        firstName: 'Ada',
        lastName: 'Plan',
        isBotActive: true,
        doNotDisturb: false,
        instagramId: null,
        currentCampaign: null,
        currentCampaignData: null,
        channel: null,
        isChatWindowOpen: false,
        externalId: null,
        customChannel: null,
        chatWidgetId: null,
      },
      [listId],
      newEventRow('Contact Created', { contact: { id: contactId } }),
    );
    for (const plan of [await planNodes(statement), await genericPlanNodes(statement)]) {
      expect(scansOf(plan, 'lists')).toEqual([]);
      expect(scansOf(plan, 'accounts')).toEqual([]);
    }
  });

  test("the session read reads no messages: the session keeps its last one, even where the account's messages are many", async () => {
    const contactId = newId('ct');
    const sessionId = newId('cs');
    await client.query(`insert into contacts (id, account_id, phone_number) values ($1, $2, '+14155550101')`, [contactId, accountId]);
    await client.query(
      `insert into chat_sessions (id, account_id, contact_id, status, last_message_id, last_message_direction) values ($1, $2, $3, 'ChatSessionOpened', 'msg_plan_last', 'outbound')`,
      [sessionId, accountId, contactId],
    );
    // The account's messages, unknown to the statistics (the table was analysed while empty).
    await client.query(
      `insert into messages (id, account_id, contact_id, session_id, direction, body, created_at)
       select 'msg_plan_' || n, $1, $2, $3, 'inbound', 'message ' || n, now() - n * interval '1 second' from generate_series(1, 2000) n`,
      [accountId, contactId, sessionId],
    );
    // The open session's read, and a reopen's (its latest session, open or not).
    for (const reopen of [false, true]) {
      const read = sql`${sessionQuery(accountId, contactId, reopen, null)}`;
      for (const plan of [await planNodes(read, { analyze: true }), await genericPlanNodes(read)]) {
        expect(plan.filter((node) => node['Relation Name'] === 'messages')).toEqual([]);
      }
    }
    const { rows } = await client.query(sessionQuery(accountId, contactId, false, null).statement());
    expect(rows).toEqual([{ id: sessionId, status: 'ChatSessionOpened', last_message_id: 'msg_plan_last', last_direction: 'outbound', repeated_id: null }]);
  });

  test("a visitor's first message reads no messages for the away message's check", async () => {
    const [contact] = (
      await client.query<{ id: string }>(`insert into contacts (id, account_id, phone_number) values ($1, $2, '+14155550102') returning id`, [newId('ct'), accountId])
    ).rows;
    const plan = await planNodes(sql`${visitorSessionSql(accountId, contact!.id, null, true)}`, { analyze: true });
    const messageReads = plan.filter((node) => node['Relation Name'] === 'messages');
    expect(messageReads.length).toBeGreaterThan(0);
    expect(messageReads.map((node) => node['Actual Loops'])).toEqual(messageReads.map(() => 0));
  });
});
