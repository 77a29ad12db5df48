// The signing secret of a subscription: minted by signature.ts, sealed at rest with the
// service's at-rest key (secrets.ts), shown only by the signing-secret routes and on a
// create that asked for it.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { WebhookSubscription } from '../db/entities/index.ts';
import type { Secrets } from '../secrets.ts';
import { findSubscription, positionOf } from './find-subscription.ts';
import { mintSigningSecret } from './signature.ts';

export type SigningSecretState = {
  webhook_id: string;
  signing_enabled: boolean;
  signing_secret: string | null;
  signing_secret_created_at: string | null;
};

/** The secret in clear, or null when signing is off. */
export function openSigningSecret(secrets: Secrets, subscription: WebhookSubscription): string | null {
  return subscription.signingSecretSealed ? secrets.unseal(subscription.signingSecretSealed) : null;
}

/** Mints a secret onto the (unflushed) subscription and returns it in clear. */
export function installNewSigningSecret(secrets: Secrets, subscription: WebhookSubscription): string {
  const secret = mintSigningSecret();
  subscription.signingSecretSealed = secrets.seal(secret);
  subscription.signingSecretCreatedAt = new Date();
  return secret;
}

async function describe(em: EntityManager, secrets: Secrets, subscription: WebhookSubscription): Promise<SigningSecretState> {
  return {
    webhook_id: await positionOf(em, subscription),
    signing_enabled: Boolean(subscription.signingSecretSealed),
    signing_secret: openSigningSecret(secrets, subscription),
    signing_secret_created_at: subscription.signingSecretCreatedAt?.toISOString() ?? null,
  };
}

/** GET /webhooks/{id}/signing-secret */
export async function getSigningSecret(em: EntityManager, secrets: Secrets, accountId: string, webhookId: string): Promise<SigningSecretState> {
  return describe(em, secrets, await findSubscription(em, accountId, webhookId));
}

/** POST /webhooks/{id}/signing-secret: turns signing on, or replaces the secret (the old one stops at once). */
export async function rotateSigningSecret(em: EntityManager, secrets: Secrets, accountId: string, webhookId: string): Promise<SigningSecretState> {
  const subscription = await findSubscription(em, accountId, webhookId);
  installNewSigningSecret(secrets, subscription);
  await em.flush();
  return describe(em, secrets, subscription);
}

/** DELETE /webhooks/{id}/signing-secret: deliveries go out unsigned from now on. */
export async function disableSigning(em: EntityManager, accountId: string, webhookId: string): Promise<{ webhook_id: string; signing_enabled: false }> {
  const subscription = await findSubscription(em, accountId, webhookId);
  subscription.signingSecretSealed = null;
  subscription.signingSecretCreatedAt = null;
  await em.flush();
  return { webhook_id: await positionOf(em, subscription), signing_enabled: false };
}
