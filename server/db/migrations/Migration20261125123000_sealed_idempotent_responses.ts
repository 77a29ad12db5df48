import { Migration } from '@mikro-orm/migrations';

export class Migration20261125123000_sealed_idempotent_responses extends Migration {

  override name = 'Migration20261125123000_sealed_idempotent_responses';

  override up(): void | Promise<void> {
    // A stored response may carry a secret, so it is kept sealed (server/idempotency): body and headers in one sealed text.
    // Responses stored before were in the clear and a migration has no SECRET_KEY to seal them, so they are wiped,
    // then their columns dropped. The rows stay: a retry of such a request is refused (422), never run a second time.
    this.addSql(`update "idempotency_keys" set "body" = null, "headers" = null where "body" is not null or "headers" is not null;`);
    this.addSql(`alter table "idempotency_keys" drop column "body", drop column "headers";`);
    this.addSql(`alter table "idempotency_keys" add column "response_sealed" text null;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "idempotency_keys" drop column "response_sealed";`);
    this.addSql(`alter table "idempotency_keys" add column "body" text null, add column "headers" jsonb null;`);
  }

}
