// rawSql's and joinSql's strings are made once per text (per separator and length) and known
// by identity afterwards: the same composition renders the same text string on every call,
// and joins longer than those kept, or texts past the bound, still render correctly.
import { describe, expect, test } from 'vitest';
import { joinSql, rawSql, sql } from '../../server/db/sql.ts';

const byId = (id: string) => sql`select ${id}::text as id`;

describe('rawSql and joinSql strings', () => {
  test('the same raw text or join renders the same string, with the same shape', () => {
    // One call site, as a module's statement is: the same template strings each time.
    const compose = (x: number, y: number) => sql`select ${rawSql('made_a, made_b')} from t where ${joinSql([sql`x = ${x}`, sql`y = ${y}`], ' and ')}`;
    const first = compose(1, 2);
    const again = compose(3, 4);
    expect(first.text).toBe('select made_a, made_b from t where x = $1 and y = $2');
    expect(again.shape).toBe(first.shape);
    expect(again.text).toBe(first.text);
    expect(again.values).toEqual([3, 4]);
  });

  test('another separator, length or text is another shape and text', () => {
    const two = joinSql([byId('1'), byId('2')], ' union all ');
    const three = joinSql([byId('1'), byId('2'), byId('3')], ' union all ');
    const otherSeparator = joinSql([byId('1'), byId('2')], ' intersect ');
    expect(new Set([two.shape, three.shape, otherSeparator.shape]).size).toBe(3);
    expect(three.text).toBe('select $1::text as id union all select $2::text as id union all select $3::text as id');
    expect(otherSeparator.text).toBe('select $1::text as id intersect select $2::text as id');
    expect(sql`${rawSql('made_c')}`.text).toBe('made_c');
    expect(sql`${rawSql('made_d')}`.text).toBe('made_d');
  });

  test('a join longer than those kept renders its text and values', () => {
    const ids = Array.from({ length: 300 }, (_, index) => String(index));
    const joined = joinSql(ids.map((id) => sql`(${id})`));
    expect(joined.values).toEqual(ids);
    expect(joined.text).toBe(ids.map((_, index) => `($${index + 1})`).join(', '));
    expect(joinSql(ids.map((id) => sql`(${id})`)).text).toBe(joined.text);
  });
});
