// Every instance of one deployment must use the same SECRET_KEY: key lookups,
// sealed copies and cursors all derive from it. The first start records the
// secret's fingerprint in the database; a start with another secret is refused
// instead of silently answering 401 to every existing key.
import type { EntityManager } from '@mikro-orm/postgresql';
import { queryRows, runSql, sql } from './db/sql.ts';
import type { Secrets } from './secrets.ts';

const SETTING = 'secret_key_fingerprint';

export class SecretMismatchError extends Error {
  override name = 'SecretMismatchError';
}

export async function assertSameSecretAsDatabase(em: EntityManager, secrets: Secrets): Promise<void> {
  const fingerprint = secrets.fingerprint();
  await runSql(em, sql`insert into settings (name, value) values (${SETTING}, ${fingerprint}) on conflict (name) do nothing`);
  const [row] = await queryRows<{ value: string }>(em, sql`select value from settings where name = ${SETTING}`);
  if (row?.value !== fingerprint) {
    throw new SecretMismatchError(
      'SECRET_KEY differs from the one this database was set up with; every instance needs the same SECRET_KEY',
    );
  }
}
