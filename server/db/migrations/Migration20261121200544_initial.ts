import { Migration } from '@mikro-orm/migrations';

export class Migration20261121200544_initial extends Migration {

  override name = 'Migration20261121200544_initial';

  override up(): void | Promise<void> {
    this.addSql(`create table "accounts" ("id" text not null, "email" text not null, "name" text null, "plan" text not null default 'pro', "is_agency" boolean not null default false, "agency_id" text null, "webhooks_enabled" boolean not null default true, "first_name" text null, "last_name" text null, "role" text null, "is_agency_sub_account" boolean not null default false, "business_name" text null, "description" text null, "address_line" text null, "city" text null, "country" text null, "postal_code" text null, "state" text null, "time_zone_id" text null, "language" text null, "monthly_credits" int not null default 1000, "monthly_credits_used" int not null default 0, "credits" int not null default 1000, "roll_over_to_next_month" boolean not null default false, "last_reset_date" timestamptz not null default now(), "notifications" jsonb null, "created_at" timestamptz not null default now(), "updated_at" timestamptz not null default now(), primary key ("id"));`);
    this.addSql(`alter table "accounts" add constraint "accounts_email_unique" unique ("email");`);
    this.addSql(`create index "accounts_agency_id_index" on "accounts" ("agency_id");`);

    this.addSql(`create table "api_keys" ("id" text not null, "account_id" text not null, "kind" text not null, "key_hash" bytea not null, "key_ciphertext" text null, "key_preview" text not null, "label" text null, "scopes" jsonb null, "expires_at" timestamptz null, "revoked_at" timestamptz null, "last_used_at" timestamptz null, "created_at" timestamptz not null default now(), primary key ("id"));`);
    this.addSql(`alter table "api_keys" add constraint "api_keys_key_hash_unique" unique ("key_hash");`);
    this.addSql(`create index "api_keys_account_id_id_index" on "api_keys" ("account_id", "id");`);
    this.addSql(`create unique index "api_keys_one_main_per_account" on "api_keys" ("account_id") where kind = 'main';`);

    this.addSql(`create table "contacts" ("id" text not null, "account_id" text not null, "phone_number" text not null, "email" text null, "first_name" text not null default 'Unknown', "last_name" text not null default 'Unknown', "is_bot_active" boolean not null default true, "do_not_disturb" boolean not null default false, "instagram_id" text null, "current_campaign" text null, "current_campaign_data" jsonb null, "channel" text null, "is_chat_window_open" boolean not null default false, "external_id" text null, "custom_channel" text null, "chat_widget_id" text null, "created_at" timestamptz not null default now(), "updated_at" timestamptz not null default now(), primary key ("id"));`);
    this.addSql(`create index "contacts_account_id_email_index" on "contacts" ("account_id", "email");`);
    this.addSql(`create index "contacts_account_id_id_index" on "contacts" ("account_id", "id");`);
    this.addSql(`alter table "contacts" add constraint "contacts_account_phone_unique" unique ("account_id", "phone_number");`);

    this.addSql(`create table "chat_sessions" ("id" text not null, "account_id" text not null, "contact_id" text not null, "status" text not null, "tag" text null, "started_at" timestamptz not null default now(), "ended_at" timestamptz null, primary key ("id"));`);
    this.addSql(`create index "chat_sessions_account_id_started_at_index" on "chat_sessions" ("account_id", "started_at");`);
    this.addSql(`create index "chat_sessions_contact_id_started_at_index" on "chat_sessions" ("contact_id", "started_at");`);

    this.addSql(`create table "events" ("id" text not null, "account_id" text not null, "name" text not null, "payload" jsonb not null, "created_at" timestamptz not null default now(), "dispatched_at" timestamptz null, primary key ("id"));`);
    this.addSql(`create index "events_account_id_created_at_index" on "events" ("account_id", "created_at");`);
    this.addSql(`create index "events_undispatched_index" on "events" ("created_at") where dispatched_at is null;`);

    this.addSql(`create table "lists" ("id" text not null, "account_id" text not null, "name" text not null, "description" text null, "created_at" timestamptz not null default now(), primary key ("id"));`);
    this.addSql(`create index "lists_account_id_id_index" on "lists" ("account_id", "id");`);

    this.addSql(`create table "contact_lists" ("contact_id" text not null, "list_id" text not null, "account_id" text not null, "created_at" timestamptz not null default now(), primary key ("contact_id", "list_id"));`);
    this.addSql(`create index "contact_lists_list_id_contact_id_index" on "contact_lists" ("list_id", "contact_id");`);

    this.addSql(`create table "messages" ("id" text not null, "account_id" text not null, "contact_id" text not null, "session_id" text null, "direction" text not null, "body" text not null, "type" text not null default 'text', "channel" text not null default 'api', "status" text not null default 'received', "sender" text null, "media_url" text null, "media_content_type" text null, "external_id" text null, "read_at" timestamptz null, "created_at" timestamptz not null default now(), primary key ("id"));`);
    this.addSql(`create index "messages_contact_id_created_at_index" on "messages" ("contact_id", "created_at");`);
    this.addSql(`create index "messages_session_id_created_at_index" on "messages" ("session_id", "created_at");`);

    this.addSql(`create table "rate_counters" ("bucket" text not null, "window_start" timestamptz not null, "count" int not null default 0, primary key ("bucket", "window_start"));`);

    this.addSql(`create table "summaries" ("id" text not null, "account_id" text not null, "contact_id" text null, "kind" text not null, "summary" text not null, "message_count" int not null default 0, "created_at" timestamptz not null default now(), primary key ("id"));`);
    this.addSql(`create index "summaries_contact_id_created_at_index" on "summaries" ("contact_id", "created_at");`);
    this.addSql(`create index "summaries_account_id_created_at_index" on "summaries" ("account_id", "created_at");`);

    this.addSql(`create table "tags" ("id" text not null, "account_id" text not null, "name" text not null, "description" text null, "created_at" timestamptz not null default now(), primary key ("id"));`);
    this.addSql(`alter table "tags" add constraint "tags_account_id_name_unique" unique ("account_id", "name");`);

    this.addSql(`create table "contact_tags" ("contact_id" text not null, "tag_id" text not null, "account_id" text not null, "created_at" timestamptz not null default now(), primary key ("contact_id", "tag_id"));`);
    this.addSql(`create index "contact_tags_tag_id_index" on "contact_tags" ("tag_id");`);

    this.addSql(`create table "tasks" ("id" text not null, "account_id" text not null, "contact_id" text null, "title" text not null, "due_at" timestamptz null, "status" text not null default 'open', "created_at" timestamptz not null default now(), "updated_at" timestamptz not null default now(), primary key ("id"));`);
    this.addSql(`create index "tasks_account_id_id_index" on "tasks" ("account_id", "id");`);

    this.addSql(`alter table "accounts" add constraint "accounts_agency_id_foreign" foreign key ("agency_id") references "accounts" ("id") on delete cascade;`);
    this.addSql(`alter table "accounts" add constraint "accounts_credits_check" check (credits >= 0);`);

    this.addSql(`alter table "api_keys" add constraint "api_keys_account_id_foreign" foreign key ("account_id") references "accounts" ("id") on delete cascade;`);
    this.addSql(`alter table "api_keys" add constraint "api_keys_kind_check" check ("kind" in ('main', 'scoped'));`);

    this.addSql(`alter table "contacts" add constraint "contacts_account_id_foreign" foreign key ("account_id") references "accounts" ("id") on delete cascade;`);

    this.addSql(`alter table "chat_sessions" add constraint "chat_sessions_account_id_foreign" foreign key ("account_id") references "accounts" ("id") on delete cascade;`);
    this.addSql(`alter table "chat_sessions" add constraint "chat_sessions_contact_id_foreign" foreign key ("contact_id") references "contacts" ("id") on delete cascade;`);
    this.addSql(`alter table "chat_sessions" add constraint "chat_sessions_status_check" check ("status" in ('ChatSessionOpened', 'ChatSessionClosed'));`);

    this.addSql(`alter table "events" add constraint "events_account_id_foreign" foreign key ("account_id") references "accounts" ("id") on delete cascade;`);

    this.addSql(`alter table "lists" add constraint "lists_account_id_foreign" foreign key ("account_id") references "accounts" ("id") on delete cascade;`);

    this.addSql(`alter table "contact_lists" add constraint "contact_lists_contact_id_foreign" foreign key ("contact_id") references "contacts" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "contact_lists" add constraint "contact_lists_list_id_foreign" foreign key ("list_id") references "lists" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "contact_lists" add constraint "contact_lists_account_id_foreign" foreign key ("account_id") references "accounts" ("id") on delete cascade;`);

    this.addSql(`alter table "messages" add constraint "messages_account_id_foreign" foreign key ("account_id") references "accounts" ("id") on delete cascade;`);
    this.addSql(`alter table "messages" add constraint "messages_contact_id_foreign" foreign key ("contact_id") references "contacts" ("id") on delete cascade;`);
    this.addSql(`alter table "messages" add constraint "messages_session_id_foreign" foreign key ("session_id") references "chat_sessions" ("id") on delete set null;`);
    this.addSql(`alter table "messages" add constraint "messages_direction_check" check ("direction" in ('inbound', 'outbound', 'outbound-api'));`);

    this.addSql(`alter table "summaries" add constraint "summaries_account_id_foreign" foreign key ("account_id") references "accounts" ("id") on delete cascade;`);
    this.addSql(`alter table "summaries" add constraint "summaries_contact_id_foreign" foreign key ("contact_id") references "contacts" ("id") on delete cascade;`);
    this.addSql(`alter table "summaries" add constraint "summaries_kind_check" check ("kind" in ('conversation', 'daily'));`);

    this.addSql(`alter table "tags" add constraint "tags_account_id_foreign" foreign key ("account_id") references "accounts" ("id") on delete cascade;`);

    this.addSql(`alter table "contact_tags" add constraint "contact_tags_contact_id_foreign" foreign key ("contact_id") references "contacts" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "contact_tags" add constraint "contact_tags_tag_id_foreign" foreign key ("tag_id") references "tags" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "contact_tags" add constraint "contact_tags_account_id_foreign" foreign key ("account_id") references "accounts" ("id") on delete cascade;`);

    this.addSql(`alter table "tasks" add constraint "tasks_account_id_foreign" foreign key ("account_id") references "accounts" ("id") on delete cascade;`);
    this.addSql(`alter table "tasks" add constraint "tasks_contact_id_foreign" foreign key ("contact_id") references "contacts" ("id") on delete set null;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "accounts" drop constraint "accounts_agency_id_foreign";`);
    this.addSql(`alter table "api_keys" drop constraint "api_keys_account_id_foreign";`);
    this.addSql(`alter table "contacts" drop constraint "contacts_account_id_foreign";`);
    this.addSql(`alter table "chat_sessions" drop constraint "chat_sessions_account_id_foreign";`);
    this.addSql(`alter table "events" drop constraint "events_account_id_foreign";`);
    this.addSql(`alter table "lists" drop constraint "lists_account_id_foreign";`);
    this.addSql(`alter table "contact_lists" drop constraint "contact_lists_account_id_foreign";`);
    this.addSql(`alter table "messages" drop constraint "messages_account_id_foreign";`);
    this.addSql(`alter table "summaries" drop constraint "summaries_account_id_foreign";`);
    this.addSql(`alter table "tags" drop constraint "tags_account_id_foreign";`);
    this.addSql(`alter table "contact_tags" drop constraint "contact_tags_account_id_foreign";`);
    this.addSql(`alter table "tasks" drop constraint "tasks_account_id_foreign";`);
    this.addSql(`alter table "chat_sessions" drop constraint "chat_sessions_contact_id_foreign";`);
    this.addSql(`alter table "contact_lists" drop constraint "contact_lists_contact_id_foreign";`);
    this.addSql(`alter table "messages" drop constraint "messages_contact_id_foreign";`);
    this.addSql(`alter table "summaries" drop constraint "summaries_contact_id_foreign";`);
    this.addSql(`alter table "contact_tags" drop constraint "contact_tags_contact_id_foreign";`);
    this.addSql(`alter table "tasks" drop constraint "tasks_contact_id_foreign";`);
    this.addSql(`alter table "messages" drop constraint "messages_session_id_foreign";`);
    this.addSql(`alter table "contact_lists" drop constraint "contact_lists_list_id_foreign";`);
    this.addSql(`alter table "contact_tags" drop constraint "contact_tags_tag_id_foreign";`);

    this.addSql(`drop table if exists "accounts" cascade;`);
    this.addSql(`drop table if exists "api_keys" cascade;`);
    this.addSql(`drop table if exists "contacts" cascade;`);
    this.addSql(`drop table if exists "chat_sessions" cascade;`);
    this.addSql(`drop table if exists "events" cascade;`);
    this.addSql(`drop table if exists "lists" cascade;`);
    this.addSql(`drop table if exists "contact_lists" cascade;`);
    this.addSql(`drop table if exists "messages" cascade;`);
    this.addSql(`drop table if exists "rate_counters" cascade;`);
    this.addSql(`drop table if exists "summaries" cascade;`);
    this.addSql(`drop table if exists "tags" cascade;`);
    this.addSql(`drop table if exists "contact_tags" cascade;`);
    this.addSql(`drop table if exists "tasks" cascade;`);
  }

}
