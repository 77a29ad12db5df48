// The one style of raw SQL: a tagged template that yields a `{ text, values }` statement
// with `$n` placeholders, composable (a fragment interpolated into another is inlined,
// its placeholders renumbered), optionally named so PostgreSQL prepares it once per
// connection, and run alike on a pg pool, a pg client, or an ORM transaction.
//
//   const byId = sql`select id from contacts where id = ${contactId}`;
//   await runSql(pool, prepared('contact-by-id', byId));
//
// Entity loads stay on the ORM; everything else that is SQL is written this way.
import { createHash } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
// The ORM's own query layer (pinned by @mikro-orm/sql): how SQL with bound parameters runs on its transaction.
import { CompiledQuery } from 'kysely';
import type pg from 'pg';

/** SQL text with its parameters kept apart: `strings` around `values`, one more string than values. */
export class Sql {
  readonly strings: readonly string[];
  readonly values: readonly unknown[];

  constructor(strings: readonly string[], values: readonly unknown[]) {
    // Flattened on construction: nested fragments become part of this one.
    const outStrings: string[] = [strings[0] ?? ''];
    const outValues: unknown[] = [];
    values.forEach((value, index) => {
      const after = strings[index + 1] ?? '';
      if (value instanceof Sql) {
        outStrings[outStrings.length - 1] += value.strings[0]!;
        outValues.push(...value.values);
        outStrings.push(...value.strings.slice(1));
        outStrings[outStrings.length - 1] += after;
      } else {
        outValues.push(value);
        outStrings.push(after);
      }
    });
    this.strings = outStrings;
    this.values = outValues;
  }

  /** The text with `$1`, `$2`, ... in order of the values. */
  get text(): string {
    let text = this.strings[0]!;
    for (let index = 1; index < this.strings.length; index += 1) text += `$${index}${this.strings[index]}`;
    return text;
  }

  /** A pg query config: what `client.query()` takes. */
  statement(): Statement {
    return { text: this.text, values: [...this.values] };
  }
}

/** What `pg`'s `query()` takes; with `name`, prepared once per connection. */
export type Statement = { name?: string; text: string; values: unknown[] };

/** The tagged template: each `${value}` is a parameter, each `${fragment}` is inlined. */
export function sql(strings: TemplateStringsArray, ...values: unknown[]): Sql {
  return new Sql(strings, values);
}

/** SQL text taken as is (identifiers, keywords chosen by code, never input). */
export function rawSql(text: string): Sql {
  return new Sql([text], []);
}

/** Fragments joined by `separator` (a list of expressions, conditions, rows). */
export function joinSql(fragments: readonly Sql[], separator = ', '): Sql {
  if (fragments.length === 0) return rawSql('');
  const strings = ['', ...fragments.slice(1).map(() => separator), ''];
  return new Sql(strings, fragments);
}

/**
 * One statement of data-modifying parts and select-list calls: `with w1 as (...), ... select
 * c1, c2`. Writers yield either kind (an `insert ...`, or a function call that writes), and a
 * caller composes those of one change into one round trip. All parts run, referenced or not.
 */
export function oneStatement(parts: { writes?: readonly Sql[]; calls?: readonly Sql[] }): Sql {
  const writes = parts.writes ?? [];
  const calls = parts.calls?.length ? joinSql(parts.calls) : rawSql('null');
  if (writes.length === 0) return sql`select ${calls}`;
  const ctes = joinSql(writes.map((write, index) => sql`${rawSql(`w${index + 1}`)} as (${write})`), ',\n');
  return sql`with ${ctes}\nselect ${calls}`;
}

const preparedNames = new Map<string, string>();

/**
 * The statement named, so each connection parses and plans it once. The name carries a hash
 * of the text: a composed statement whose text varies gets one prepared statement per
 * variant (pg refuses one name for two texts).
 */
export function prepared(label: string, query: Sql): Statement {
  const text = query.text;
  let name = preparedNames.get(text);
  if (!name) {
    name = `${label}-${createHash('sha1').update(text).digest('base64url').slice(0, 10)}`;
    preparedNames.set(text, name);
  }
  return { name, text, values: [...query.values] };
}

/** Where SQL runs: a pg pool or client (a transaction's, say), or an ORM EntityManager (its transaction, when in one). */
export type SqlRunner = pg.Pool | pg.ClientBase | EntityManager;

export type SqlResult<Row> = { rows: Row[]; rowCount: number };

function isEntityManager(runner: SqlRunner): runner is EntityManager {
  return typeof (runner as EntityManager).getKysely === 'function';
}

/**
 * Runs the statement. On an EntityManager it runs on its transaction (or its pool outside
 * one) with bound parameters, unnamed (the ORM's connection layer prepares nothing), and a
 * database error comes back as the ORM's exception (UniqueConstraintViolationException, ...)
 * as the ORM's own queries raise it.
 */
export async function runSql<Row = Record<string, unknown>>(runner: SqlRunner, query: Sql | Statement): Promise<SqlResult<Row>> {
  const statement = query instanceof Sql ? query.statement() : query;
  if (isEntityManager(runner)) {
    try {
      const result = await runner.getKysely().executeQuery<Row>(CompiledQuery.raw(statement.text, statement.values));
      return { rows: result.rows as Row[], rowCount: result.numAffectedRows === undefined ? result.rows.length : Number(result.numAffectedRows) };
    } catch (error) {
      throw runner.getDriver().convertException(error as Error);
    }
  }
  const result = await runner.query<Row & pg.QueryResultRow>(statement);
  return { rows: result.rows, rowCount: result.rowCount ?? result.rows.length };
}

/** The rows of the statement. */
export async function queryRows<Row = Record<string, unknown>>(runner: SqlRunner, query: Sql | Statement): Promise<Row[]> {
  return (await runSql<Row>(runner, query)).rows;
}
