// Generates a migration from the difference between the entities and the schema that the
// existing migrations produce. Needs no database: it builds a scratch embedded PostgreSQL,
// applies every migration in server/db/migrations, diffs, and writes the new file there.
//
//   npm run migration:create               -> Migration<timestamp>.ts
//   npm run migration:create -- add_tasks  -> Migration<timestamp>_add_tasks.ts
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEmbeddedPostgres } from './embedded.ts';
import { MIGRATIONS_DIR, migrate, openOrm } from './orm.ts';

const name = process.argv[2];
if (name !== undefined && !/^[a-z0-9_]+$/i.test(name)) {
  console.error('The migration name may contain only letters, digits and underscores.');
  process.exit(2);
}

const scratchDir = await mkdtemp(join(tmpdir(), 'mapi-migration-'));
const pg = await startEmbeddedPostgres({ dataDir: scratchDir });
try {
  const orm = await openOrm(pg.url);
  try {
    const existing = await migrate(orm);
    console.log(`Applied ${existing.length} existing migration(s) to a scratch database.`);

    const result = await orm.migrator.create(MIGRATIONS_DIR, false, false, name);
    if (!result.fileName) {
      console.log('The entities match the migrations; nothing to generate.');
    } else {
      console.log(`Wrote ${join(MIGRATIONS_DIR, result.fileName)}`);
      // Apply it and diff again: anything left over is a difference the generator cannot
      // express (or expresses differently from what PostgreSQL reports back).
      await migrate(orm);
      if (await orm.migrator.checkSchema()) {
        console.warn('Warning: after applying the new migration the schema still differs from the entities.');
        process.exitCode = 1;
      }
    }
  } finally {
    await orm.close();
  }
} finally {
  await pg.stop();
  await rm(scratchDir, { recursive: true, force: true });
}
