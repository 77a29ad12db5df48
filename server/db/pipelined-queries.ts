// Several statements sent on one connection without waiting for each answer: pg's pipeline
// mode, switched on for the batch on a connection its caller holds alone with nothing in
// flight. Each statement runs as it would sent alone, in order, with its own Sync: a failure
// fails only it, except that inside a transaction block every later one is then refused.
import type { Writable } from 'node:stream';
import type pg from 'pg';
import type { Statement } from './sql.ts';

/**
 * The statements' outcomes in order, once every answer has come: one round trip, and one
 * write to the server's socket (pg writes each statement on its own otherwise; a system call
 * each, and on a loopback connection the server's wake-up with it).
 */
export async function queryPipelinedSettled(client: pg.ClientBase, statements: readonly (Statement | string)[]): Promise<PromiseSettledResult<pg.QueryResult>[]> {
  // A per-client flag that pg reads at each send; off again only once every answer is in.
  const connection = client as unknown as { pipeline: boolean; connection: { stream: Writable } };
  connection.pipeline = true;
  try {
    // pg sends a statement as soon as query() queues it in pipeline mode, corking the stream
    // around its own messages; corked around them all, the stream writes them together.
    const stream = connection.connection.stream;
    stream.cork();
    let answers: Promise<pg.QueryResult>[];
    try {
      answers = statements.map((statement) => client.query(statement));
    } finally {
      stream.uncork();
    }
    return await Promise.allSettled(answers);
  } finally {
    connection.pipeline = false;
  }
}

/** The statements' results in order: one round trip; the first failure thrown once every answer has come. */
export async function queryPipelined(client: pg.ClientBase, statements: readonly (Statement | string)[]): Promise<pg.QueryResult[]> {
  const settled = await queryPipelinedSettled(client, statements);
  const failed = settled.find((outcome) => outcome.status === 'rejected');
  if (failed) throw failed.reason;
  return settled.map((outcome) => (outcome as PromiseFulfilledResult<pg.QueryResult>).value);
}
