// A transaction on one connection of the pg pool, for hot-path SQL kept off the ORM
// (webhook dispatch, sending, recording, replay). A connection whose transaction
// failed is discarded rather than returned to the pool in an unknown state.
import type pg from 'pg';

export async function withPoolTransaction<T>(pool: pg.Pool, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let failed: Error | undefined;
  try {
    await client.query('begin');
    const result = await work(client);
    await client.query('commit');
    return result;
  } catch (error) {
    failed = error as Error;
    await client.query('rollback').catch(() => {});
    throw error;
  } finally {
    client.release(failed);
  }
}
