import { Migration } from '@mikro-orm/migrations';

export class Migration20261124020000_idempotency_keys extends Migration {

  override name = 'Migration20261124020000_idempotency_keys';

  override up(): void | Promise<void> {
    // Only server/idempotency/sql touches this table (no entity): one row per (account acted on, Idempotency-Key).
    this.addSql(`create table "idempotency_keys" ("account_id" text not null, "key" text not null, "fingerprint" text not null, "state" text not null default 'running', "status" int null, "content_type" text null, "body" text null, "headers" jsonb null, "created_at" timestamptz not null default now(), "completed_at" timestamptz null, constraint "idempotency_keys_state_check" check ("state" in ('running', 'completed')), primary key ("account_id", "key"));`);
    this.addSql(`create index "idempotency_keys_created_at_index" on "idempotency_keys" ("created_at");`);

    this.addSql(`alter table "idempotency_keys" add constraint "idempotency_keys_account_id_foreign" foreign key ("account_id") references "accounts" ("id") on delete cascade;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "idempotency_keys" cascade;`);
  }

}
