import { Migration } from '@mikro-orm/migrations';

export class Migration20261125150000_chat_session_human_alerted extends Migration {

  override name = 'Migration20261125150000_chat_session_human_alerted';

  override up(): void | Promise<void> {
    // A hand-off alerts a person once per chat session.
    this.addSql(`alter table "chat_sessions" add "human_alerted_at" timestamptz null;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "chat_sessions" drop column "human_alerted_at";`);
  }

}
