import { Migration } from '@mikro-orm/migrations';

export class Migration20261127230000_account_email_per_agency extends Migration {

  override name = 'Migration20261127230000_account_email_per_agency';

  override up(): void | Promise<void> {
    // A client's e-mail is unique among its agency's clients, not service-wide: a
    // service-wide rule answered 409 to an agency for any e-mail with an account anywhere.
    this.addSql(`alter table "accounts" drop constraint "accounts_email_unique";`);
    this.addSql(`create unique index "accounts_email_unique" on "accounts" ("email") where "agency_id" is null;`);
    this.addSql(`create unique index "accounts_agency_id_email_unique" on "accounts" ("agency_id", "email") where "agency_id" is not null;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop index "accounts_agency_id_email_unique";`);
    this.addSql(`drop index "accounts_email_unique";`);
    this.addSql(`alter table "accounts" add constraint "accounts_email_unique" unique ("email");`);
  }

}
