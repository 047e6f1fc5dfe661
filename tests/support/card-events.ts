/** Delivering card events to the webhook route handler, signed as Stripe signs them. */
import { POST as cardWebhook } from '@/app/api/cardprovider/webhook/route';
import type { StripeEvent } from '@/scripts/stand-ins/stripe-events';
import { signCardEvent } from '@/scripts/stand-ins/webhooks';
import { TEST_WEBHOOK_SECRET } from './env';
import { freshIp } from './requests';

export async function deliverEvent(event: StripeEvent | object): Promise<{ status: number; body: unknown }> {
  const { payload, signature } = signCardEvent(event, TEST_WEBHOOK_SECRET);
  const response = await cardWebhook(
    new Request('http://localhost:3000/api/cardprovider/webhook', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'stripe-signature': signature, 'x-forwarded-for': freshIp() },
      body: payload,
    }),
  );
  return { status: response.status, body: await response.json() };
}
