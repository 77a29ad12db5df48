import { defineEntity, p } from '@mikro-orm/core';

// Deployment-wide facts every instance must agree on (the secret-key check).
export const SettingSchema = defineEntity({
  name: 'Setting',
  tableName: 'settings',
  properties: {
    name: p.text().primary(),
    value: p.text(),
  },
});

export class Setting extends SettingSchema.class {}
SettingSchema.setClass(Setting);
