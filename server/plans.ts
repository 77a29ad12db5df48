// Plans and the features they include, below every module that asks: accounts store a
// plan, authentication asks whether it includes `api_access` on every API-key request.
export const PLANS = ['pro', 'free'] as const;
export type Plan = (typeof PLANS)[number];
export type Feature = 'api_access' | 'webhooks';

const FEATURES: Record<Plan, ReadonlySet<Feature>> = {
  pro: new Set(['api_access', 'webhooks']),
  free: new Set(['webhooks']),
};

export function planHasFeature(plan: string, feature: Feature): boolean {
  return FEATURES[plan as Plan]?.has(feature) ?? false;
}
