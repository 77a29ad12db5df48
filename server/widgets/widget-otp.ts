// GET /chat-widgets/{configId}/otp: the widget's current RFC 6238 code (SHA-1, 6 digits,
// 30-second step), which the owner reads to a visitor who types it into the chat, so the
// owner knows the person in the conversation is the one on the phone with them.
import type { EntityManager } from '@mikro-orm/postgresql';
import { generate } from 'otplib';
import type { Secrets } from '../secrets.ts';
import { requireOwnWidget } from './widget-record.ts';

export const OTP_PERIOD_SECONDS = 30;

export type WidgetOtp = { current_otp: string; expires_in: number };

export async function currentWidgetOtp(
  em: EntityManager,
  secrets: Secrets,
  accountId: string,
  widgetId: string,
  nowMs = Date.now(),
): Promise<WidgetOtp> {
  const widget = await requireOwnWidget(em, accountId, widgetId);
  const epoch = Math.floor(nowMs / 1000);
  const code = await generate({
    secret: secrets.unseal(widget.otpSecretSealed),
    epoch,
    period: OTP_PERIOD_SECONDS,
    digits: 6,
    algorithm: 'sha1',
  });
  return { current_otp: code, expires_in: OTP_PERIOD_SECONDS - (epoch % OTP_PERIOD_SECONDS) };
}
