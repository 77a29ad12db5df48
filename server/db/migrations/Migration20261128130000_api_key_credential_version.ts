import { Migration } from '@mikro-orm/migrations';

export class Migration20261128130000_api_key_credential_version extends Migration {

  override name = 'Migration20261128130000_api_key_credential_version';

  override up(): void | Promise<void> {
    // Raised with every announced change of what the account's credentials may do, so a
    // process that holds a key's scopes and plan in memory confirms them with its id alone.
    this.addSql(`alter table "api_keys" add column "credential_version" int not null default 0;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "api_keys" drop column "credential_version";`);
  }

}
