import { Migration } from '@mikro-orm/migrations';

export class Migration20261126220000_contact_bot_typing_for extends Migration {

  override name = 'Migration20261126220000_contact_bot_typing_for';

  override up(): void | Promise<void> {
    // The visitor message whose bot turn ends the bot's typing: a later message whose turn is
    // known to be silent gets no turn, so "the newest visitor message" no longer names it.
    this.addSql(`alter table "contacts" add "bot_typing_for" text null;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "contacts" drop column "bot_typing_for";`);
  }

}
