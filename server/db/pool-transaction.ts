// A transaction on one connection of the pg pool, for hot-path SQL kept off the ORM
// (webhook dispatch, sending, recording, replay, visitor messages). A connection whose
// transaction failed, or that the server ended meanwhile, is discarded rather than returned
// to the pool in an unknown state. Its first statements can go with its BEGIN, and its last
// with its COMMIT, each in one round trip (pipelined-queries.ts).
import type pg from 'pg';
import { queryPipelined, queryPipelinedSettled } from './pipelined-queries.ts';
import type { Statement } from './sql.ts';

/** A transaction whose end its caller decides: it may outlive the function that opened it. */
export type OpenTransaction = {
  client: pg.PoolClient;
  /**
   * Commits, or rolls back given a failure, and returns the connection to the pool (discarding
   * it after any failure, the server's ending of it included); rethrows the failure. The
   * transaction ends once: a later call only rethrows its failure. `afterCommit`: plain SQL
   * sent with the COMMIT in one round trip, run once the commit has succeeded, in a
   * transaction of its own (values written into it as literals).
   */
  end(failure?: unknown, afterCommit?: string | null): Promise<void>;
  /**
   * Runs `last`, then commits with `afterCommit` (as end's), in one round trip, and ends as
   * end() does; returns `last`'s result. When `last` fails the transaction is rolled back and
   * the after-commit text does not run.
   */
  commitWith(last: Statement, afterCommit?: string | null): Promise<pg.QueryResult>;
  /** The results of OpenOptions' `with`, in order. */
  opened: pg.QueryResult[];
};

export type OpenOptions = {
  /** Runs on the connection before the transaction opens, committed on its own. */
  first?: (client: pg.PoolClient) => Promise<unknown>;
  /** What opens it: BEGIN, and any SET LOCAL sent with it in one round trip. */
  begin?: string;
  /** Statements sent with BEGIN in the same round trip, each run once the one before is done (its locks held). */
  with?: Statement[];
};

/**
 * Ahead of COMMIT sent right behind the transaction's last statement: in a failed
 * transaction it is refused, and its error skips the rest of the query string, where a
 * COMMIT would roll back without an error and the after-commit text would still run.
 */
const ONLY_IF_NOT_FAILED = 'select';

/**
 * Checks out a connection and opens a transaction on it. The server ending the connection
 * while the caller waits between statements (an idle-in-transaction limit, a lost network) is
 * an error event on it: remembered, it fails end().
 */
export async function openPoolTransaction(pool: pg.Pool, options: OpenOptions = {}): Promise<OpenTransaction> {
  const client = await pool.connect();
  let lost: unknown;
  const onError = (error: unknown) => (lost ??= error);
  client.on('error', onError);
  let open = false;
  let released = false;
  let opened: pg.QueryResult[] = [];
  const end = async (failure?: unknown, afterCommit?: string | null): Promise<void> => {
    if (released) {
      if (failure !== undefined) throw failure;
      return;
    }
    if (open) {
      open = false;
      const ending = failure !== undefined ? 'rollback' : afterCommit ? `commit; ${afterCommit}` : 'commit';
      await client.query(ending).catch((error: unknown) => (failure ??= error));
    }
    released = true;
    failure ??= lost;
    client.removeListener('error', onError);
    client.release(failure as Error | undefined);
    if (failure !== undefined) throw failure;
  };
  try {
    await options.first?.(client);
    open = true;
    const begin = options.begin ?? 'begin';
    if (options.with?.length) opened = (await queryPipelined(client, [begin, ...options.with])).slice(1);
    else await client.query(begin);
  } catch (error) {
    await end(error);
  }
  const commitWith = async (last: Statement, afterCommit?: string | null): Promise<pg.QueryResult> => {
    if (!open) throw new Error('commitWith() on a transaction that is not open');
    const [written, committed] = await queryPipelinedSettled(client, [last, `${ONLY_IF_NOT_FAILED}; commit${afterCommit ? `; ${afterCommit}` : ''}`]);
    // Still open, and failed: end() rolls it back and rethrows.
    if (written!.status === 'rejected') await end(written!.reason);
    // Committed, or ended by the failed COMMIT.
    open = false;
    await end(committed!.status === 'rejected' ? committed!.reason : undefined);
    return (written as PromiseFulfilledResult<pg.QueryResult>).value;
  };
  return { client, end, commitWith, opened };
}

/**
 * Runs `work` in a transaction: committed when it returns, rolled back when it throws.
 * `afterCommit` gives, from work's result, plain SQL to send with the COMMIT (OpenTransaction.end).
 */
export async function withPoolTransaction<T>(
  pool: pg.Pool,
  work: (client: pg.PoolClient) => Promise<T>,
  options: { afterCommit?: (result: T) => string | null } = {},
): Promise<T> {
  const transaction = await openPoolTransaction(pool);
  let result: T;
  let afterCommit: string | null | undefined;
  try {
    result = await work(transaction.client);
    afterCommit = options.afterCommit?.(result);
  } catch (error) {
    await transaction.end(error);
    throw error;
  }
  await transaction.end(undefined, afterCommit);
  return result;
}
