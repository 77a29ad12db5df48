import { defineEntity, p } from '@mikro-orm/core';

export const RateCounterSchema = defineEntity({
  name: 'RateCounter',
  tableName: 'rate_counters',
  properties: {
    bucket: p.text().primary(),
    windowStart: p.datetime().primary(),
    count: p.integer().default(0),
  },
  primaryKeys: ['bucket', 'windowStart'],
});

export class RateCounter extends RateCounterSchema.class {}
RateCounterSchema.setClass(RateCounter);
