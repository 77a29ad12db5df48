import { Migration } from '@mikro-orm/migrations';

export class Migration20261129091000_chat_session_last_message extends Migration {

  override name = 'Migration20261129091000_chat_session_last_message';

  override up(): void | Promise<void> {
    // A session keeps its last message's id and direction, written by the one writer of
    // messages in the update it already makes of the session (whose activity index rules out
    // a HOT update anyway, so the two columns cost no index entry). The message writer's
    // session read then reads no messages: it had found the last one through the messages'
    // indexes, by a plan that statistics not yet caught up with a growing table could turn
    // into a read of every message of the account.
    this.addSql(`alter table "chat_sessions" add column "last_message_id" text null, add column "last_message_direction" text null;`);
    this.addSql(`update "chat_sessions" s set ("last_message_id", "last_message_direction") = (
  select m.id, m.direction from "messages" m where m.session_id = s.id and m.account_id = s.account_id order by m.created_at desc, m.id desc limit 1
);`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "chat_sessions" drop column "last_message_id", drop column "last_message_direction";`);
  }

}
