import { Migration } from '@mikro-orm/migrations';

export class Migration20261128210000_webhook_attempts_follow_deliveries extends Migration {

  override name = 'Migration20261128210000_webhook_attempts_follow_deliveries';

  override up(): void | Promise<void> {
    // A delivery's attempts go with it, as before; what goes is the key's check on every
    // attempt written. Its one writer (record-attempts.ts) writes an attempt in the
    // transaction that wrote its delivery, or under the delivery's row lock, so the check
    // never found one missing; it cost PostgreSQL about 20 µs per delivery and a row-lock
    // WAL record (bench/db-work/webhook-delivery.ts). The trigger removes a deleted
    // delivery's attempts by the same index the key's cascade used, whatever deleted it:
    // its subscription's deletion, its account's through its event.
    this.addSql(`alter table "webhook_attempts" drop constraint "webhook_attempts_delivery_id_foreign";`);
    this.addSql(`create or replace function "delete_webhook_delivery_attempts"() returns trigger language plpgsql as $$
begin
  delete from webhook_attempts where delivery_id = old.id and account_id = old.account_id;
  return null;
end;
$$;`);
    this.addSql(`create trigger "webhook_deliveries_delete_attempts" after delete on "webhook_deliveries"
  for each row execute function "delete_webhook_delivery_attempts"();`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop trigger "webhook_deliveries_delete_attempts" on "webhook_deliveries";`);
    this.addSql(`drop function "delete_webhook_delivery_attempts"();`);
    this.addSql(`delete from "webhook_attempts" a where not exists (select from "webhook_deliveries" d where d.id = a.delivery_id and d.account_id = a.account_id);`);
    this.addSql(`alter table "webhook_attempts" add constraint "webhook_attempts_delivery_id_foreign" foreign key ("delivery_id", "account_id") references "webhook_deliveries" ("id", "account_id") on delete cascade;`);
  }

}
