/** Delivering card events to the webhook route handler, signed as Stripe signs them. */
import { POST as cardWebhook } from '@/app/api/cardprovider/webhook/route';
import { expect } from 'vitest';
import type { StripeEvent } from '@/stand-ins/stripe/events';
import type { StripeIntent } from '@/stand-ins/stripe/objects';
import { signCardEvent } from '@/stand-ins/webhook-deliveries';
import { TEST_WEBHOOK_SECRET } from './env';
import type { Providers } from './providers';
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

/**
 * A pending order of 30.00 with a payment intent, paid at Stripe (it has a charge); the
 * success event delivered, and accepted, when `recorded`.
 */
export async function paidOrder(providers: Providers, orderId: number, recorded = true): Promise<StripeIntent> {
  providers.woo.seed({ id: orderId, lines: [{ total: '30.00' }] });
  const intent = providers.stripe.create({ amount: '3000', currency: 'usd', metadata: { shop_order_id: String(orderId) } });
  const paid = providers.stripe.succeed(intent.id);
  if (recorded) expect((await deliverEvent(providers.stripe.events.events.at(-1)!)).status).toBe(200);
  expect(paid.latest_charge).toBeTruthy();
  return paid;
}
