import { Migration } from '@mikro-orm/migrations';

export class Migration20261123230000_messaging extends Migration {

  override name = 'Migration20261123230000_messaging';

  override up(): void | Promise<void> {
    this.addSql(`create table "broadcasts" ("id" text not null, "account_id" text not null, "list_id" text not null, "template_id" text not null, "status" text not null default 'queued', "total" int not null default 0, "sent" int not null default 0, "failed" int not null default 0, "skipped" int not null default 0, "error" text null, "created_at" timestamptz not null default now(), "started_at" timestamptz null, "completed_at" timestamptz null, "updated_at" timestamptz not null default now(), primary key ("id"));`);
    this.addSql(`create index "broadcasts_account_id_id_index" on "broadcasts" ("account_id", "id");`);

    this.addSql(`create table "broadcast_recipients" ("broadcast_id" text not null, "contact_id" text not null, "status" text not null default 'pending', "message_id" text null, "provider_message_id" text null, "error" text null, "claimed_at" timestamptz null, "finished_at" timestamptz null, primary key ("broadcast_id", "contact_id"));`);
    this.addSql(`create index "broadcast_recipients_broadcast_id_status_index" on "broadcast_recipients" ("broadcast_id", "status");`);

    this.addSql(`create table "message_templates" ("id" text not null, "account_id" text not null, "provider_template_id" text null, "name" text not null, "language" text not null default 'en', "category" text not null default 'MARKETING', "status" text not null, "body" text not null, "components" jsonb not null, "template" jsonb not null, "created_at" timestamptz not null default now(), "synced_at" timestamptz not null default now(), primary key ("id"));`);
    this.addSql(`alter table "message_templates" add constraint "message_templates_account_name_language_unique" unique ("account_id", "name", "language");`);

    this.addSql(`create table "messaging_connections" ("account_id" text not null, "phone_number_id" text not null, "business_account_id" text null, "access_token_sealed" text not null, "connected_at" timestamptz not null default now(), "updated_at" timestamptz not null default now(), primary key ("account_id"));`);
    this.addSql(`alter table "messaging_connections" add constraint "messaging_connections_phone_number_id_unique" unique ("phone_number_id");`);

    this.addSql(`alter table "contacts" add "chat_window_expires_at" timestamptz null;`);
    this.addSql(`create index "contacts_chat_window_expires_at_index" on "contacts" ("chat_window_expires_at");`);


    this.addSql(`alter table "messages" add "provider_message_id" text null, add "template_id" text null;`);
    this.addSql(`alter table "messages" add constraint "messages_provider_message_id_unique" unique ("provider_message_id");`);

    this.addSql(`alter table "broadcasts" add constraint "broadcasts_account_id_foreign" foreign key ("account_id") references "accounts" ("id") on delete cascade;`);
    this.addSql(`alter table "broadcasts" add constraint "broadcasts_status_check" check ("status" in ('queued', 'running', 'completed', 'failed'));`);

    this.addSql(`alter table "broadcast_recipients" add constraint "broadcast_recipients_broadcast_id_foreign" foreign key ("broadcast_id") references "broadcasts" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "broadcast_recipients" add constraint "broadcast_recipients_contact_id_foreign" foreign key ("contact_id") references "contacts" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "broadcast_recipients" add constraint "broadcast_recipients_status_check" check ("status" in ('pending', 'claimed', 'sent', 'failed', 'skipped'));`);

    this.addSql(`alter table "message_templates" add constraint "message_templates_account_id_foreign" foreign key ("account_id") references "accounts" ("id") on delete cascade;`);

    this.addSql(`alter table "messaging_connections" add constraint "messaging_connections_account_id_foreign" foreign key ("account_id") references "accounts" ("id") on update cascade on delete cascade;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "broadcast_recipients" drop constraint "broadcast_recipients_broadcast_id_foreign";`);

    this.addSql(`drop table if exists "broadcasts" cascade;`);
    this.addSql(`drop table if exists "broadcast_recipients" cascade;`);
    this.addSql(`drop table if exists "message_templates" cascade;`);
    this.addSql(`drop table if exists "messaging_connections" cascade;`);

    this.addSql(`drop index "contacts_chat_window_expires_at_index";`);
    this.addSql(`alter table "contacts" drop column "chat_window_expires_at";`);


    this.addSql(`alter table "messages" drop constraint "messages_provider_message_id_unique";`);
    this.addSql(`alter table "messages" drop column "provider_message_id", drop column "template_id";`);
  }

}
