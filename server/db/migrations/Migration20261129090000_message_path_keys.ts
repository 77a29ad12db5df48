import { Migration } from '@mikro-orm/migrations';

export class Migration20261129090000_message_path_keys extends Migration {

  override name = 'Migration20261129090000_message_path_keys';

  override up(): void | Promise<void> {
    // An account's events go with it, as before, through a trigger on the account's deletion
    // instead of a key checked on every event written. The one writer of events
    // (insert-events.ts) reads the account row in the same statement and writes no event for
    // an account that does not exist, so the check never found one missing; it took a share
    // lock on the account row per event, and concurrent writers of one account share that
    // lock through a multixact. An event committed while its account is being deleted may
    // outlive it: nothing reads events by an account that is gone, the dispatch finds no
    // subscription for it, and the history sweep deletes it with the others of its age.
    this.addSql(`alter table "events" drop constraint "events_account_id_foreign";`);
    this.addSql(`create or replace function "delete_account_events"() returns trigger language plpgsql as $$
begin
  delete from events where account_id = old.id;
  return null;
end;
$$;`);
    this.addSql(`create trigger "accounts_delete_events" after delete on "accounts"
  for each row execute function "delete_account_events"();`);
    // Only a message sent or received through the messaging provider has the provider's id:
    // the others (the widget's, the bot's, the API's own) no longer take an entry in its index.
    this.addSql(`drop index "messages_account_id_provider_message_id_unique";`);
    this.addSql(`create unique index "messages_account_id_provider_message_id_unique" on "messages" ("account_id", "provider_message_id") where provider_message_id is not null;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop index "messages_account_id_provider_message_id_unique";`);
    this.addSql(`create unique index "messages_account_id_provider_message_id_unique" on "messages" ("account_id", "provider_message_id");`);
    this.addSql(`drop trigger "accounts_delete_events" on "accounts";`);
    this.addSql(`drop function "delete_account_events"();`);
    this.addSql(`delete from "events" e where not exists (select from "accounts" a where a.id = e.account_id);`);
    this.addSql(`alter table "events" add constraint "events_account_id_foreign" foreign key ("account_id") references "accounts" ("id") on delete cascade;`);
  }

}
