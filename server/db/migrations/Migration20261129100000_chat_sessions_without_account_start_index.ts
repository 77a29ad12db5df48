import { Migration } from '@mikro-orm/migrations';

export class Migration20261129100000_chat_sessions_without_account_start_index extends Migration {

  override name = 'Migration20261129100000_chat_sessions_without_account_start_index';

  override up(): void | Promise<void> {
    // No statement reads an account's sessions by their start any more (recent sessions are
    // listed by their activity, a contact's by the contact's index), and an account's
    // deletion finds its sessions by the activity index, which leads with the account too.
    // Every message rewrites every index of its session (the activity index rules out a HOT
    // update), so this one cost an entry per message for nothing.
    this.addSql(`drop index "chat_sessions_account_id_started_at_index";`);
  }

  override down(): void | Promise<void> {
    this.addSql(`create index "chat_sessions_account_id_started_at_index" on "chat_sessions" ("account_id", "started_at");`);
  }

}
