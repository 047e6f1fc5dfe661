/**
 * Every writer of an order shares one per-order lock (docs/decisions.md#d12): a
 * storefront's submit-order racing a card payment must not put a paid order
 * back to pending.
 */
import Stripe from 'stripe';
import { beforeEach, describe, expect, it } from 'vitest';
import { POST as cardWebhook } from '@/app/api/cardprovider/webhook/route';
import { POST as submitOrder } from '@/app/api/submit-order/route';
import { TEST_WEBHOOK_SECRET, useTestEnv } from '../support/env';
import { useProviders } from '../support/providers';
import { freshIp, postJson, tokenFor } from '../support/requests';

const providers = useProviders();

beforeEach(() => {
  useTestEnv();
  providers.reset();
});

function signedSuccess(orderId: number, amount: number): Request {
  const payload = JSON.stringify({
    id: `evt_race_${orderId}`,
    object: 'event',
    type: 'payment_intent.succeeded',
    created: Math.floor(Date.now() / 1000),
    data: {
      object: {
        id: `pi_race_${orderId}`,
        object: 'payment_intent',
        amount,
        currency: 'usd',
        status: 'succeeded',
        metadata: { shop_order_id: String(orderId) },
        latest_charge: 'ch_race',
      },
    },
  });
  const signature = Stripe.webhooks.generateTestHeaderString({ payload, secret: TEST_WEBHOOK_SECRET });
  return new Request('http://localhost:3000/api/cardprovider/webhook', {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'stripe-signature': signature, 'x-forwarded-for': freshIp() },
    body: payload,
  });
}

describe('concurrent writers of one order', () => {
  it('a submit-order racing a card success leaves the order paid, never back at pending', async () => {
    providers.woo.seed({ id: 701, lines: [{ total: '10.00' }] });
    providers.setStoreLatency(40); // both reads are in flight before either write lands
    const token = await tokenFor(701);

    const [submitted, webhook] = await Promise.all([
      submitOrder(postJson('/api/submit-order', { token, billing_address: { first_name: 'Ada', country: 'GB' } })),
      cardWebhook(signedSuccess(701, 1000)),
    ]);

    expect(webhook.status).toBe(200);
    expect([200, 400]).toContain(submitted.status);
    const order = providers.woo.get(701);
    expect(order.status).toBe('processing');
    expect(order.date_paid).not.toBeNull();
    // Whichever ran first, the other saw its write: the reads and writes did not interleave.
    const sequence = providers.callsTo('store').map((c) => c.method);
    expect(sequence.slice(0, 2)).toEqual(['GET', 'PUT']);
  });
});
