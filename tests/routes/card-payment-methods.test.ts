/**
 * STRIPE_PAYMENT_METHODS (docs/decisions.md#d37): which methods a new intent offers, and
 * the title a paid order gets when the customer paid with something other
 * than a card.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { POST as cardWebhook } from '@/app/api/cardprovider/webhook/route';
import { POST as paymentIntent } from '@/app/api/payment-intent/route';
import { resetServices } from '@/lib/services';
import { cardEvent, signCardEvent } from '@/stand-ins/webhook-deliveries';
import { TEST_WEBHOOK_SECRET, useTestEnv } from '../support/env';
import { useProviders } from '../support/providers';
import { freshIp, postJson, tokenFor } from '../support/requests';

const providers = useProviders();

beforeEach(() => {
  useTestEnv();
  providers.reset();
});

async function createIntentFor(orderId: number) {
  providers.woo.seed({ id: orderId, lines: [{ total: '20.00' }] });
  const response = await paymentIntent(postJson('/api/payment-intent', { token: await tokenFor(orderId) }));
  expect(response.status).toBe(200);
  return providers.callsTo('card', 'POST', /\/v1\/payment_intents$/)[0]!.body as Record<string, unknown>;
}

describe('STRIPE_PAYMENT_METHODS', () => {
  it('limits a new intent to cards by default', async () => {
    const body = await createIntentFor(1201);
    expect(body.allowed_payment_method_types).toEqual({ 0: 'card' });
    expect(body).not.toHaveProperty('automatic_payment_methods');
    expect([...providers.stripe.intents.values()][0]!.payment_method_types).toEqual(['card']);
  });

  it('sends an explicit list as the allowed types', async () => {
    useTestEnv({ STRIPE_PAYMENT_METHODS: 'card,link' });
    resetServices();
    const body = await createIntentFor(1202);
    expect(body.allowed_payment_method_types).toEqual({ 0: 'card', 1: 'link' });
  });

  it('asks for dynamic payment methods with automatic', async () => {
    useTestEnv({ STRIPE_PAYMENT_METHODS: 'automatic', CARD_LIFECYCLE_EVENTS: 'async' });
    resetServices();
    const body = await createIntentFor(1203);
    expect(body.automatic_payment_methods).toEqual({ enabled: 'true' });
    expect(body).not.toHaveProperty('allowed_payment_method_types');
  });
});

describe('the payment method title on a paid order', () => {
  async function pay(orderId: number, allowed: Record<string, string> | undefined) {
    providers.woo.seed({ id: orderId, lines: [{ total: '20.00' }] });
    const intent = providers.stripe.create({
      amount: '2000',
      currency: 'usd',
      metadata: { shop_order_id: String(orderId) },
      ...(allowed ? { allowed_payment_method_types: allowed } : {}),
    });
    const { payload, signature } = signCardEvent(cardEvent('payment_intent.succeeded', providers.stripe.succeed(intent.id)), TEST_WEBHOOK_SECRET);
    const response = await cardWebhook(
      new Request('http://localhost:3000/api/cardprovider/webhook', {
        method: 'POST',
        headers: { 'stripe-signature': signature, 'x-forwarded-for': freshIp() },
        body: payload,
      }),
    );
    expect(response.status).toBe(200);
    return providers.woo.get(orderId);
  }

  it('names the method used when it is not a card', async () => {
    const order = await pay(1204, { 0: 'sepa_debit' });
    expect(order.status).toBe('processing');
    expect(order.payment_method_title).toBe('SEPA Direct Debit');
    expect(order.payment_method).toBe('cardprovider');
  });

  it('keeps the card title for a card, and when the event does not say which method paid', async () => {
    expect((await pay(1205, { 0: 'card' })).payment_method_title).toBe('Credit Card (cardprovider)');
    expect((await pay(1206, undefined)).payment_method_title).toBe('Credit Card (cardprovider)');
  });
});
