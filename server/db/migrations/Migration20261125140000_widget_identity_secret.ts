import { Migration } from '@mikro-orm/migrations';

export class Migration20261125140000_widget_identity_secret extends Migration {

  override name = 'Migration20261125140000_widget_identity_secret';

  override up(): void | Promise<void> {
    // Sealed under SECRET_KEY like the one-time-code secret; null until the owner asks for one.
    this.addSql(`alter table "chat_widgets" add column "identity_secret_sealed" text null;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "chat_widgets" drop column "identity_secret_sealed";`);
  }

}
