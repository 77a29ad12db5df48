import { Migration } from '@mikro-orm/migrations';

export class Migration20261123212247_webhooks extends Migration {

  override name = 'Migration20261123212247_webhooks';

  override up(): void | Promise<void> {
    this.addSql(`create table "webhook_subscriptions" ("id" text not null, "account_id" text not null, "name" text not null, "url" text not null, "subscribed_to" text[] not null, "subscribed_to_tags" text[] not null, "retries_enabled" boolean not null default false, "enabled" boolean not null default true, "apply_to_sub_accounts" boolean not null default false, "signing_secret_sealed" text null, "signing_secret_created_at" timestamptz null, "created_at" timestamptz not null default now(), "updated_at" timestamptz not null default now(), primary key ("id"));`);
    this.addSql(`create index "webhook_subscriptions_account_id_created_at_index" on "webhook_subscriptions" ("account_id", "created_at");`);
    this.addSql(`create index "webhook_subscriptions_inherited_index" on "webhook_subscriptions" ("apply_to_sub_accounts") where apply_to_sub_accounts;`);
    this.addSql(`alter table "webhook_subscriptions" add constraint "webhook_subscriptions_account_id_name_unique" unique ("account_id", "name");`);

    this.addSql(`create table "webhook_health" ("subscription_id" text not null, "account_id" text not null, "consecutive_failures" int not null default 0, "total_failures" int not null default 0, "total_successes" int not null default 0, "is_disabled" boolean not null default false, "disabled_at" timestamptz null, "disabled_reason" text null, "last_failure" jsonb null, "last_success_at" timestamptz null, "created_at" timestamptz not null default now(), "updated_at" timestamptz not null default now(), primary key ("subscription_id", "account_id"));`);

    this.addSql(`create table "webhook_deliveries" ("id" text not null, "event_id" text not null, "subscription_id" text not null, "account_id" text not null, "status" text not null default 'pending', "attempts" int not null default 0, "next_attempt_at" timestamptz null, "locked_until" timestamptz null, "first_attempt_at" timestamptz null, "last_status_code" int null, "last_error" text null, "created_at" timestamptz not null default now(), "updated_at" timestamptz not null default now(), primary key ("id"));`);
    this.addSql(`create index "webhook_deliveries_due_index" on "webhook_deliveries" ("next_attempt_at") where status = 'pending';`);
    this.addSql(`create index "webhook_deliveries_subscription_id_created_at_index" on "webhook_deliveries" ("subscription_id", "created_at");`);
    this.addSql(`alter table "webhook_deliveries" add constraint "webhook_deliveries_event_id_subscription_id_unique" unique ("event_id", "subscription_id");`);

    this.addSql(`create table "webhook_attempts" ("id" text not null, "delivery_id" text not null, "attempt" int not null, "status_code" int null, "duration_ms" int not null, "error" text null, "created_at" timestamptz not null default now(), primary key ("id"));`);
    this.addSql(`create index "webhook_attempts_delivery_id_attempt_index" on "webhook_attempts" ("delivery_id", "attempt");`);

    this.addSql(`alter table "webhook_subscriptions" add constraint "webhook_subscriptions_account_id_foreign" foreign key ("account_id") references "accounts" ("id") on delete cascade;`);

    this.addSql(`alter table "webhook_health" add constraint "webhook_health_subscription_id_foreign" foreign key ("subscription_id") references "webhook_subscriptions" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "webhook_health" add constraint "webhook_health_account_id_foreign" foreign key ("account_id") references "accounts" ("id") on update cascade on delete cascade;`);

    this.addSql(`alter table "webhook_deliveries" add constraint "webhook_deliveries_event_id_foreign" foreign key ("event_id") references "events" ("id") on delete cascade;`);
    this.addSql(`alter table "webhook_deliveries" add constraint "webhook_deliveries_subscription_id_foreign" foreign key ("subscription_id") references "webhook_subscriptions" ("id") on delete cascade;`);
    this.addSql(`alter table "webhook_deliveries" add constraint "webhook_deliveries_account_id_foreign" foreign key ("account_id") references "accounts" ("id") on delete cascade;`);

    this.addSql(`alter table "webhook_attempts" add constraint "webhook_attempts_delivery_id_foreign" foreign key ("delivery_id") references "webhook_deliveries" ("id") on delete cascade;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "webhook_health" drop constraint "webhook_health_subscription_id_foreign";`);
    this.addSql(`alter table "webhook_deliveries" drop constraint "webhook_deliveries_subscription_id_foreign";`);
    this.addSql(`alter table "webhook_attempts" drop constraint "webhook_attempts_delivery_id_foreign";`);

    this.addSql(`drop table if exists "webhook_subscriptions" cascade;`);
    this.addSql(`drop table if exists "webhook_health" cascade;`);
    this.addSql(`drop table if exists "webhook_deliveries" cascade;`);
    this.addSql(`drop table if exists "webhook_attempts" cascade;`);
  }

}
