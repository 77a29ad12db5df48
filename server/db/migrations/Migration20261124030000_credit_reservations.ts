import { Migration } from '@mikro-orm/migrations';

export class Migration20261124030000_credit_reservations extends Migration {

  override name = 'Migration20261124030000_credit_reservations';

  override up(): void | Promise<void> {
    // Only server/credits/spend-credits.ts touches this table (no entity): credits taken for work not yet settled or released.
    this.addSql(`create table "credit_reservations" ("id" text not null, "account_id" text not null, "amount" int not null, "created_at" timestamptz not null default now(), constraint "credit_reservations_amount_check" check ("amount" > 0), primary key ("id"));`);
    this.addSql(`create index "credit_reservations_created_at_index" on "credit_reservations" ("created_at");`);

    this.addSql(`alter table "credit_reservations" add constraint "credit_reservations_account_id_foreign" foreign key ("account_id") references "accounts" ("id") on delete cascade;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "credit_reservations" cascade;`);
  }

}
