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

/**
 * Shapes: a statement's text depends only on the templates it was composed from, not on its
 * values, so each distinct composition gets a small number and its text (and prepared name)
 * is rendered once per process. A template literal's strings array is the same object on
 * every call, so it is known by identity; other strings arrays (rawSql's, joinSql's) by
 * content. Shapes are interned up to MAX_SHAPES; past that a statement renders its text
 * each time (shape 0), so statements built with unbounded variety cannot grow memory.
 */
const MAX_SHAPES = 10_000;
const templateShapes = new WeakMap<readonly string[], number>();
const contentShapes = new Map<string, number>();
const renderedTexts = new Map<number, string>();
let nextShape = 1;
/** Shapes and trie nodes made so far, bounded by MAX_SHAPES. */
let interned = 0;

function newShape(): number {
  if (interned >= MAX_SHAPES) return 0;
  interned += 1;
  return nextShape++;
}

function shapeOfStrings(strings: readonly string[]): number {
  const known = templateShapes.get(strings);
  if (known !== undefined) return known;
  // A template literal's strings array is frozen and carries `raw`: the same object on every call.
  if (Object.isFrozen(strings) && 'raw' in strings) {
    const shape = newShape();
    if (shape !== 0) templateShapes.set(strings, shape);
    return shape;
  }
  const key = strings.join('\u0000');
  let shape = contentShapes.get(key);
  if (shape === undefined) {
    shape = newShape();
    if (shape !== 0) contentShapes.set(key, shape);
  }
  return shape;
}

/** A composition's shape: a trie from the outer strings' shape through (position, nested shape) of each nested fragment. */
type ShapeNode = { shape: number; next: Map<number, ShapeNode> | null };
const compositions = new Map<number, ShapeNode>();

function step(node: ShapeNode, key: number): ShapeNode | null {
  let next = node.next?.get(key);
  if (next === undefined) {
    if (interned >= MAX_SHAPES) return null;
    interned += 1;
    next = { shape: 0, next: null };
    (node.next ??= new Map()).set(key, next);
  }
  return next;
}

/** SQL text with its parameters kept apart: `strings` around `parts` (values or nested fragments), one more string than parts. */
export class Sql {
  /** The parameters in order, nested fragments' included. */
  readonly values: readonly unknown[];
  /** The composition's shape (0: not interned): equal shapes render equal text. */
  readonly shape: number;
  readonly #strings: readonly string[];
  readonly #parts: readonly unknown[];

  constructor(strings: readonly string[], parts: readonly unknown[]) {
    this.#strings = strings;
    this.#parts = parts;
    const base = shapeOfStrings(strings);
    let values: unknown[] | null = null;
    // The trie node of the nested fragments so far; null with none yet, or once the shape is unknown.
    let node: ShapeNode | null = null;
    let known = base !== 0;
    for (let index = 0; index < parts.length; index++) {
      const part = parts[index];
      if (part instanceof Sql) {
        values ??= parts.slice(0, index);
        for (const value of part.values) values.push(value);
        if (known && part.shape !== 0) {
          if (!node) {
            node = compositions.get(base) ?? { shape: 0, next: null };
            if (!compositions.has(base)) compositions.set(base, node);
          }
          // MAX_SHAPES is below 2^14: position and shape fit one small integer.
          node = step(node, index * 16_384 + part.shape);
          if (!node) known = false;
        } else {
          known = false;
        }
      } else if (values) {
        values.push(part);
      }
    }
    this.values = values ?? parts;
    if (!known) this.shape = 0;
    else if (!node) this.shape = base;
    else this.shape = node.shape === 0 ? (node.shape = newShape()) : node.shape;
  }

  /** The text with `$1`, `$2`, ... in order of the values. */
  get text(): string {
    if (this.shape === 0) return this.#render({ text: '', count: 0 }).text;
    let text = renderedTexts.get(this.shape);
    if (text === undefined) {
      text = this.#render({ text: '', count: 0 }).text;
      renderedTexts.set(this.shape, text);
    }
    return text;
  }

  #render(out: { text: string; count: number }): { text: string; count: number } {
    out.text += this.#strings[0] ?? '';
    for (let index = 0; index < this.#parts.length; index++) {
      const part = this.#parts[index];
      if (part instanceof Sql) part.#render(out);
      else out.text += `$${++out.count}`;
      out.text += this.#strings[index + 1] ?? '';
    }
    return out;
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

/**
 * The strings arrays of rawSql and joinSql, made once per text (per separator and length) and
 * then known by identity, as a template literal's: no array is built and no content key
 * joined per call. Bounded like the shapes; past the bounds arrays are made per call.
 */
const rawStrings = new Map<string, readonly string[]>();
const MAX_JOINED = 256;
const joinStrings = new Map<string, (readonly string[])[]>();

function knownByIdentity(strings: readonly string[]): boolean {
  const shape = shapeOfStrings(strings);
  if (shape === 0) return false;
  templateShapes.set(strings, shape);
  return true;
}

/**
 * `text` as a string literal, for SQL sent as plain text (a simple-query batch takes no
 * parameters): quotes doubled, and backslashes doubled in an E'' literal. The same literal
 * as pg's escapeLiteral, made in one pass: its character-by-character concatenation left a
 * chain of string pieces per character, garbage that every announced message paid for.
 */
export function stringLiteral(text: string): string {
  return text.includes('\\') ? ` E'${text.replace(/['\\]/g, '$&$&')}'` : `'${text.replaceAll("'", "''")}'`;
}

/** SQL text taken as is (identifiers, keywords chosen by code, never input). */
export function rawSql(text: string): Sql {
  let strings = rawStrings.get(text);
  if (!strings) {
    strings = Object.freeze([text]);
    if (rawStrings.size < MAX_SHAPES && knownByIdentity(strings)) rawStrings.set(text, strings);
  }
  return new Sql(strings, []);
}

/** Fragments joined by `separator` (a list of expressions, conditions, rows). */
export function joinSql(fragments: readonly Sql[], separator = ', '): Sql {
  if (fragments.length === 0) return rawSql('');
  let bySize = joinStrings.get(separator);
  let strings = bySize?.[fragments.length];
  if (!strings) {
    strings = Object.freeze(['', ...fragments.slice(1).map(() => separator), '']);
    if (fragments.length <= MAX_JOINED && (bySize || joinStrings.size < MAX_SHAPES) && knownByIdentity(strings)) {
      if (!bySize) joinStrings.set(separator, (bySize = []));
      bySize[fragments.length] = strings;
    }
  }
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
const namesByShape = new Map<number, { label: string; name: string }>();

/**
 * The statement named, so each connection parses and plans it once. The name carries a hash
 * of the text: a composed statement whose text varies gets one prepared statement per
 * variant (pg refuses one name for two texts).
 */
export function prepared(label: string, query: Sql): Statement {
  const known = query.shape === 0 ? undefined : namesByShape.get(query.shape);
  if (known && known.label === label) return { name: known.name, text: query.text, values: [...query.values] };
  const text = query.text;
  let name = preparedNames.get(text);
  if (!name) {
    name = `${label}-${createHash('sha1').update(text).digest('base64url').slice(0, 10)}`;
    if (preparedNames.size < MAX_SHAPES) preparedNames.set(text, name);
  }
  if (query.shape !== 0) namesByShape.set(query.shape, { label, name });
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
