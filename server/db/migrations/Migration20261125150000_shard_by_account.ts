import { Migration } from '@mikro-orm/migrations';

// Makes the schema distributable by account (Citus's multi-tenant rule, see docs/scaling.md):
// every account-owned table carries `account_id`, and its primary key, unique indexes and
// foreign keys to other account-owned tables include it, so one account's rows can live on
// one node and every constraint is checked there. Tables that stay whole on every node (a
// reference table) or on the coordinator say why in their comment; test/db/shard-by-account
// reads the catalog and fails for any table that breaks the rule.
//
// Primary keys become (id, account_id): ids are random and globally unique, so this changes
// nothing for the data, and id comes first so lookups by id alone (the ORM's flushes, which
// know only an entity's id) keep using the primary key. The entities keep `id` as their
// primary key for the same reason; the database's key is the wider one.
//
// `on delete set null` on a key that holds account_id would null account_id too (and Citus
// refuses it), so tasks.contact_id and messages.session_id now cascade like the others:
// contacts are archived, never deleted, and sessions go only with their contact, so rows
// are deleted only with their whole account, which deleted them already.

/** Account-owned tables keyed by `id`. */
const ID_TABLES = [
  'appointments',
  'broadcasts',
  'chat_sessions',
  'chat_widgets',
  'contacts',
  'credit_reservations',
  'events',
  'lists',
  'message_templates',
  'messages',
  'summaries',
  'tags',
  'tasks',
  'webhook_attempts',
  'webhook_deliveries',
] as const;

/** Foreign keys between account-owned tables: [table, column, parent, old delete rule]. */
const CHILD_KEYS = [
  ['appointments', 'contact_id', 'contacts', 'cascade'],
  ['broadcast_recipients', 'broadcast_id', 'broadcasts', 'cascade'],
  ['broadcast_recipients', 'contact_id', 'contacts', 'cascade'],
  ['chat_sessions', 'contact_id', 'contacts', 'cascade'],
  ['contact_lists', 'contact_id', 'contacts', 'cascade'],
  ['contact_lists', 'list_id', 'lists', 'cascade'],
  ['contact_tags', 'contact_id', 'contacts', 'cascade'],
  ['contact_tags', 'tag_id', 'tags', 'cascade'],
  ['messages', 'contact_id', 'contacts', 'cascade'],
  ['messages', 'session_id', 'chat_sessions', 'set null'],
  ['summaries', 'contact_id', 'contacts', 'cascade'],
  ['tasks', 'contact_id', 'contacts', 'set null'],
  ['webhook_attempts', 'delivery_id', 'webhook_deliveries', 'cascade'],
  ['webhook_deliveries', 'event_id', 'events', 'cascade'],
] as const;

/** Tables that hung off an account-owned parent without their own account_id: [table, parent column, parent]. */
const NEW_ACCOUNT_COLUMNS = [
  ['broadcast_recipients', 'broadcast_id', 'broadcasts'],
  ['webhook_attempts', 'delivery_id', 'webhook_deliveries'],
] as const;

/** Composite primary keys that gain account_id: [table, old columns]. */
const COMPOSITE_KEYS = [
  ['broadcast_recipients', ['broadcast_id', 'contact_id']],
  ['contact_lists', ['contact_id', 'list_id']],
  ['contact_tags', ['contact_id', 'tag_id']],
] as const;

/**
 * Unique indexes that gain account_id: [table, old name, old columns, new name, new columns,
 * partial predicate]. An ON CONFLICT naming one lists the new columns (any order).
 */
const UNIQUES = [
  [
    'contacts',
    'contacts_chat_widget_id_widget_visitor_id_unique',
    ['chat_widget_id', 'widget_visitor_id'],
    'contacts_account_id_chat_widget_id_widget_visitor_id_unique',
    ['account_id', 'chat_widget_id', 'widget_visitor_id'],
    null,
  ],
  ['messages', 'messages_provider_message_id_unique', ['provider_message_id'], 'messages_account_id_provider_message_id_unique', ['account_id', 'provider_message_id'], null],
  [
    'webhook_deliveries',
    'webhook_deliveries_event_id_subscription_id_unique',
    ['event_id', 'subscription_id'],
    'webhook_deliveries_event_id_subscription_id_account_id_unique',
    ['event_id', 'subscription_id', 'account_id'],
    null,
  ],
  ['chat_sessions', 'chat_sessions_one_open_per_contact', ['contact_id'], 'chat_sessions_one_open_per_contact', ['contact_id', 'account_id'], `status = 'ChatSessionOpened'`],
] as const;

const COMMENTS = {
  accounts:
    'not distributed: the tenant table, a reference table on every node: found by email and OIDC subject before the account is known, and an agency reaches its sub-accounts across tenants',
  api_keys: 'not distributed: looked up by key hash before the account is known; a reference table',
  messaging_connections: "not distributed: found by the provider's phone number id before the account is known; a reference table",
  webhook_subscriptions:
    "not distributed: an agency's subscriptions also serve its sub-accounts, so deliveries and health rows of every tenant reference them; a reference table",
  rate_counters: 'not distributed: counters per credential or visitor, counted before the account is known; a coordinator-local table',
  settings: 'not distributed: installation-wide settings the coordinator reads at start; a coordinator-local table',
} as const;

const fkName = (table: string, column: string) => `${table}_${column}_foreign`;

export class Migration20261125150000_shard_by_account extends Migration {

  override name = 'Migration20261125150000_shard_by_account';

  override up(): void | Promise<void> {
    for (const [table, column] of CHILD_KEYS) this.addSql(`alter table "${table}" drop constraint "${fkName(table, column)}";`);

    for (const [table, column, parent] of NEW_ACCOUNT_COLUMNS) {
      this.addSql(`alter table "${table}" add column "account_id" text;`);
      this.addSql(`update "${table}" t set "account_id" = p."account_id" from "${parent}" p where p."id" = t."${column}";`);
      this.addSql(`alter table "${table}" alter column "account_id" set not null;`);
    }

    for (const table of ID_TABLES) {
      this.addSql(`alter table "${table}" drop constraint "${table}_pkey";`);
      this.addSql(`alter table "${table}" add constraint "${table}_pkey" primary key ("id", "account_id");`);
    }
    for (const [table, columns] of COMPOSITE_KEYS) {
      this.addSql(`alter table "${table}" drop constraint "${table}_pkey";`);
      this.addSql(`alter table "${table}" add constraint "${table}_pkey" primary key (${[...columns, 'account_id'].map((c) => `"${c}"`).join(', ')});`);
    }

    for (const [table, name, , newName, columns, where] of UNIQUES) {
      this.addSql(where === null ? `alter table "${table}" drop constraint "${name}";` : `drop index "${name}";`);
      this.addSql(`create unique index "${newName}" on "${table}" (${columns.map((c) => `"${c}"`).join(', ')})${where === null ? '' : ` where ${where}`};`);
    }

    for (const [table, column, parent] of CHILD_KEYS) {
      this.addSql(
        `alter table "${table}" add constraint "${fkName(table, column)}" foreign key ("${column}", "account_id") references "${parent}" ("id", "account_id") on delete cascade;`,
      );
    }

    for (const [table, comment] of Object.entries(COMMENTS)) this.addSql(`comment on table "${table}" is '${comment.replaceAll("'", "''")}';`);
  }

  override down(): void | Promise<void> {
    for (const table of Object.keys(COMMENTS)) this.addSql(`comment on table "${table}" is null;`);
    for (const [table, column] of CHILD_KEYS) this.addSql(`alter table "${table}" drop constraint "${fkName(table, column)}";`);
    for (const [table, name, columns, newName, , where] of UNIQUES) {
      this.addSql(`drop index "${newName}";`);
      const list = columns.map((c) => `"${c}"`).join(', ');
      this.addSql(
        where === null
          ? `alter table "${table}" add constraint "${name}" unique (${list});`
          : `create unique index "${name}" on "${table}" (${list}) where ${where};`,
      );
    }
    for (const [table, columns] of COMPOSITE_KEYS) {
      this.addSql(`alter table "${table}" drop constraint "${table}_pkey";`);
      this.addSql(`alter table "${table}" add constraint "${table}_pkey" primary key (${columns.map((c) => `"${c}"`).join(', ')});`);
    }
    for (const table of ID_TABLES) {
      this.addSql(`alter table "${table}" drop constraint "${table}_pkey";`);
      this.addSql(`alter table "${table}" add constraint "${table}_pkey" primary key ("id");`);
    }
    for (const [table, column, parent, rule] of CHILD_KEYS) {
      const onUpdate = ['broadcast_recipients', 'contact_lists', 'contact_tags'].includes(table) ? ' on update cascade' : '';
      this.addSql(`alter table "${table}" add constraint "${fkName(table, column)}" foreign key ("${column}") references "${parent}" ("id")${onUpdate} on delete ${rule};`);
    }
    for (const [table] of NEW_ACCOUNT_COLUMNS) this.addSql(`alter table "${table}" drop column "account_id";`);
  }

}
