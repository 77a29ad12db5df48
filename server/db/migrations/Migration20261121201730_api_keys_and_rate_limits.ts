import { Migration } from '@mikro-orm/migrations';

export class Migration20261121201730_api_keys_and_rate_limits extends Migration {

  override name = 'Migration20261121201730_api_keys_and_rate_limits';

  override up(): void | Promise<void> {
    // ID-token sessions map the provider's subject to one account.
    this.addSql(`alter table "accounts" add column "oidc_subject" text null;`);
    this.addSql(`alter table "accounts" add constraint "accounts_oidc_subject_unique" unique ("oidc_subject");`);
    // Counting every request must not wait for a WAL flush; a crash only resets the current budgets.
    this.addSql(`alter table "rate_counters" set unlogged;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "rate_counters" set logged;`);
    this.addSql(`alter table "accounts" drop constraint "accounts_oidc_subject_unique";`);
    this.addSql(`alter table "accounts" drop column "oidc_subject";`);
  }

}
