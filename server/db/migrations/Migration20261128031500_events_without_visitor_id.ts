import { Migration } from '@mikro-orm/migrations';

export class Migration20261128031500_events_without_visitor_id extends Migration {

  override name = 'Migration20261128031500_events_without_visitor_id';

  override up(): void | Promise<void> {
    // Contact Created of a widget visitor used to carry the visitor id, which is the visitor's
    // credential on the public widget endpoints: stored events are sent again (retries,
    // replays), so they lose it too.
    this.addSql(`update "events" set "payload" = "payload" #- '{data,contact,widget_visitor_id}' where "name" = 'Contact Created' and "payload" -> 'data' -> 'contact' ? 'widget_visitor_id';`);
  }

  override down(): void | Promise<void> {
    // What was removed is not put back.
  }

}
