import { Migration } from '@mikro-orm/migrations';

export class Migration20261124000000_chat_widgets extends Migration {

  override name = 'Migration20261124000000_chat_widgets';

  override up(): void | Promise<void> {
    this.addSql(`create table "chat_widgets" ("id" text not null, "account_id" text not null, "name" text not null, "settings" jsonb not null, "otp_secret_sealed" text not null, "created_at" timestamptz not null default now(), "updated_at" timestamptz not null default now(), primary key ("id"));`);
    this.addSql(`create index "chat_widgets_account_id_created_at_index" on "chat_widgets" ("account_id", "created_at");`);

    this.addSql(`alter table "contacts" add "widget_visitor_id" text null, add "is_bot_typing" boolean not null default false;`);
    this.addSql(`alter table "contacts" alter column "phone_number" drop not null;`);
    this.addSql(`alter table "contacts" add constraint "contacts_chat_widget_id_widget_visitor_id_unique" unique ("chat_widget_id", "widget_visitor_id");`);


    this.addSql(`alter table "chat_widgets" add constraint "chat_widgets_account_id_foreign" foreign key ("account_id") references "accounts" ("id") on delete cascade;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "chat_widgets" cascade;`);

    this.addSql(`alter table "contacts" drop constraint "contacts_chat_widget_id_widget_visitor_id_unique";`);
    this.addSql(`alter table "contacts" drop column "widget_visitor_id", drop column "is_bot_typing";`);
    this.addSql(`alter table "contacts" alter column "phone_number" set not null;`);

  }

}
