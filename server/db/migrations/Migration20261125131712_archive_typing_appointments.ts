import { Migration } from '@mikro-orm/migrations';

export class Migration20261125131712_archive_typing_appointments extends Migration {

  override name = 'Migration20261125131712_archive_typing_appointments';

  override up(): void | Promise<void> {
    this.addSql(`alter table "contacts" add "bot_typing_until" timestamptz null, add "archived_at" timestamptz null;`);
    this.addSql(`create index "contacts_account_id_id_unarchived_index" on "contacts" ("account_id", "id") where archived_at is null;`);
    this.addSql(`create index "contacts_account_id_id_archived_index" on "contacts" ("account_id", "id") where archived_at is not null;`);

    this.addSql(`create table "appointments" ("id" text not null, "account_id" text not null, "contact_id" text not null, "starts_at" timestamptz not null, "ends_at" timestamptz null, "title" text not null, "notes" text null, "status" text not null default 'booked', "created_at" timestamptz not null default now(), "cancelled_at" timestamptz null, primary key ("id"));`);
    this.addSql(`create index "appointments_account_id_contact_id_id_index" on "appointments" ("account_id", "contact_id", "id");`);
    this.addSql(`alter table "appointments" add constraint "appointments_account_id_foreign" foreign key ("account_id") references "accounts" ("id") on delete cascade;`);
    this.addSql(`alter table "appointments" add constraint "appointments_contact_id_foreign" foreign key ("contact_id") references "contacts" ("id") on delete cascade;`);
    this.addSql(`alter table "appointments" add constraint "appointments_status_check" check ("status" in ('booked', 'cancelled'));`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "appointments" cascade;`);
    this.addSql(`drop index "contacts_account_id_id_unarchived_index";`);
    this.addSql(`drop index "contacts_account_id_id_archived_index";`);
    this.addSql(`alter table "contacts" drop column "bot_typing_until", drop column "archived_at";`);
  }

}
