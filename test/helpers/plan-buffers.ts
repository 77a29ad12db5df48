// What a statement reads: runs it, then runs it again under EXPLAIN (ANALYZE, BUFFERS) and
// counts the shared buffers its plan touched (hit or read), for plan tests that bound a
// statement's cost by what it reads rather than by time.
import type pg from 'pg';

type PlanNode = { 'Shared Hit Blocks': number; 'Shared Read Blocks': number };

export async function runCountingBuffers<Row extends pg.QueryResultRow>(
  client: pg.Client,
  statement: { text: string; values: unknown[] },
): Promise<{ rows: Row[]; buffers: number }> {
  const { rows } = await client.query<Row>(statement);
  const explained = await client.query<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>({ text: `explain (analyze, buffers, format json) ${statement.text}`, values: statement.values });
  const plan = explained.rows[0]!['QUERY PLAN'][0].Plan;
  return { rows, buffers: plan['Shared Hit Blocks'] + plan['Shared Read Blocks'] };
}
