// The counting chain's SQL (count-visitor-requests.ts) is kept per chain shape, keyed by
// where the parameters start and each bucket's condition: the key must hold all the text
// depends on. The same shape gives the same text whatever the keys and limits (parameters,
// numbered from the start given), and another start, condition or length gives another.
import { describe, expect, test } from 'vitest';
import { countBucketsSql, type CountedBucket } from '../../server/widgets/count-visitor-requests.ts';

const chain = (keys: string[], conditions: (string | undefined)[] = []): CountedBucket[] =>
  keys.map((key, index) => ({ key, limit: 10 + index, ...(conditions[index] ? { onlyIf: conditions[index] } : {}) }));

describe('countBucketsSql', () => {
  test('the same shape gives the same strings whatever the keys and limits; the values are the keys and limits in order', () => {
    const first = countBucketsSql(chain(['widget-address:10.0.0.1', 'visitor:a']), 4);
    const second = countBucketsSql(chain(['widget-address:10.9.9.9', 'visitor:b']), 4);
    expect(second.ctes).toBe(first.ctes);
    expect(second.select).toBe(first.select);
    expect(first.values).toEqual(['widget-address:10.0.0.1', 10, 'visitor:a', 11]);
    expect(second.values).toEqual(['widget-address:10.9.9.9', 10, 'visitor:b', 11]);
    // Parameters numbered from `first`: key then limit for each bucket.
    expect(first.ctes).toContain('select $4::text, rate_clock.window_start');
    expect(first.ctes).toContain('where c.count < $5::int');
    expect(first.ctes).toContain('select $6::text, rate_clock.window_start');
    expect(first.ctes).toContain('where c.count < $7::int');
  });

  test('another first parameter, another condition or another length is another text', () => {
    const base = countBucketsSql(chain(['a', 'b']), 4);
    expect(countBucketsSql(chain(['a', 'b']), 2).ctes).not.toBe(base.ctes);
    expect(countBucketsSql(chain(['a', 'b'], [undefined, '$3::text is null']), 4).ctes).not.toBe(base.ctes);
    expect(countBucketsSql(chain(['a', 'b'], [undefined, '$3::text is null']), 4).ctes).toContain('($3::text is null)');
    expect(countBucketsSql(chain(['a', 'b', 'c']), 4).ctes).not.toBe(base.ctes);
    expect(countBucketsSql(chain(['a', 'b', 'c']), 4).values).toHaveLength(6);
  });
});
