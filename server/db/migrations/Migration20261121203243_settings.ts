import { Migration } from '@mikro-orm/migrations';

export class Migration20261121203243_settings extends Migration {

  override name = 'Migration20261121203243_settings';

  override up(): void | Promise<void> {
    this.addSql(`create table "settings" ("name" text not null, "value" text not null, primary key ("name"));`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "settings" cascade;`);
  }

}
