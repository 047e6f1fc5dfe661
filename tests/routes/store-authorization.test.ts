/**
 * STRIPE_CAPTURE=manual from the WooCommerce admin: intents are created for
 * manual capture; the plugin's "Capture charge" action captures the order's
 * total (POST /api/store/capture) and a cancelled order releases its
 * authorization (POST /api/store/cancel-authorization), each once however
 * often it is called. With STRIPE_CAPTURE unset, intents are created as the
 * spec says.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { POST as paymentIntentPOST } from '@/app/api/payment-intent/route';
import { deliverEvent } from '../support/card-events';
import { useTestEnv } from '../support/env';
import { useProviders } from '../support/providers';
import { postJson, tokenFor } from '../support/requests';
import { callStore, TEST_STORE_CALLBACK_SECRET } from '../support/store-callbacks';

const providers = useProviders();

beforeEach(() => {
  useTestEnv({ STORE_CALLBACK_SECRET: TEST_STORE_CALLBACK_SECRET, STRIPE_CAPTURE: 'manual' });
  providers.reset();
});

/** A pending order of 30.00 whose payment intent the checkout created through the service. */
async function checkedOutOrder(orderId: number): Promise<string> {
  providers.woo.seed({ id: orderId, lines: [{ total: '20.00' }, { total: '10.00' }] });
  const response = await paymentIntentPOST(postJson('/api/payment-intent', { token: await tokenFor(orderId) }));
  expect(response.status).toBe(200);
  return ((await response.json()) as { payment_intent_id: string }).payment_intent_id;
}

/** The customer confirmed the card: with manual capture, Stripe authorizes and holds the amount. */
async function authorizedOrder(orderId: number): Promise<string> {
  const intentId = await checkedOutOrder(orderId);
  providers.stripe.authorize(intentId);
  return intentId;
}

const captureCalls = () => providers.callsTo('card', 'POST', /\/capture$/);
const cancelCalls = () => providers.callsTo('card', 'POST', /\/cancel$/);
const succeededEvent = () => providers.stripe.events.events.filter((e) => e.type === 'payment_intent.succeeded').at(-1)!;

describe('STRIPE_CAPTURE', () => {
  it('manual: the intent is created for manual capture', async () => {
    await checkedOutOrder(2201);
    expect(providers.callsTo('card', 'POST', /^\/v1\/payment_intents$/)[0]!.body).toMatchObject({ capture_method: 'manual' });
  });

  it('unset: the intent is created as the spec says, without a capture method', async () => {
    useTestEnv();
    await checkedOutOrder(2202);
    expect(providers.callsTo('card', 'POST', /^\/v1\/payment_intents$/)[0]!.body).not.toHaveProperty('capture_method');
  });
});

describe('Capture charge', () => {
  it('captures the authorization; the succeeded event then records the payment as for any payment', async () => {
    const intentId = await authorizedOrder(2211);

    expect(await callStore('capture', { order_id: 2211 })).toEqual({ status: 200, body: { captured: '30.00' } });
    expect(providers.stripe.retrieve(intentId)).toMatchObject({ status: 'succeeded', amount_received: 3000 });
    expect((await deliverEvent(succeededEvent())).status).toBe(200);
    expect(providers.woo.get(2211)).toMatchObject({ status: 'processing', transaction_id: expect.stringMatching(/^ch_/) });
  });

  it('is idempotent by the order: a second call answers the amount captured, without a second capture', async () => {
    await authorizedOrder(2212);
    const first = await callStore('capture', { order_id: 2212 });
    const second = await callStore('capture', { order_id: 2212 });

    expect(second).toEqual(first);
    expect(captureCalls()).toHaveLength(1);
  });

  it('captures the order’s lower total when an item was removed after the authorization, and records it paid', async () => {
    const intentId = await authorizedOrder(2213);
    const order = providers.woo.orders.get(2213)!;
    order.line_items = order.line_items.slice(0, 1);
    order.total = '20.00';

    expect(await callStore('capture', { order_id: 2213 })).toEqual({ status: 200, body: { captured: '20.00' } });
    expect(captureCalls()[0]!.body).toEqual({ amount_to_capture: '2000' });
    expect(providers.stripe.retrieve(intentId)).toMatchObject({ amount: 3000, amount_received: 2000 });
    expect((await deliverEvent(succeededEvent())).status).toBe(200);
    expect(providers.woo.get(2213).status).toBe('processing');
  });

  it('refuses an order whose customer has not authorized a payment, and one whose authorization was cancelled', async () => {
    await checkedOutOrder(2214);
    expect(await callStore('capture', { order_id: 2214 })).toEqual({
      status: 400,
      body: { error: 'The customer has not authorized a card payment for this order (yet).' },
    });
    const intentId = await authorizedOrder(2215);
    providers.stripe.cancel(intentId, {});
    expect((await callStore('capture', { order_id: 2215 })).body.error).toMatch(/cancelled or has expired/);
    expect(captureCalls()).toEqual([]);
  });

  it('says so in plain words when the authorization expired at Stripe', async () => {
    await authorizedOrder(2216);
    providers.failCard('POST', /\/capture$/, 400, 'invalid_request_error', 'charge_expired_for_capture');

    expect(await callStore('capture', { order_id: 2216 })).toEqual({
      status: 400,
      body: { error: 'The authorization has expired (card authorizations last 7 days): the payment can no longer be captured.' },
    });
  });
});

describe('an order cancelled in the admin', () => {
  it('releases the authorization once, however often the plugin calls', async () => {
    const intentId = await authorizedOrder(2221);

    expect(await callStore('cancelAuthorization', { order_id: 2221 })).toEqual({ status: 200, body: { canceled: true } });
    expect(await callStore('cancelAuthorization', { order_id: 2221 })).toEqual({ status: 200, body: { canceled: true } });

    expect(providers.stripe.retrieve(intentId).status).toBe('canceled');
    expect(cancelCalls()).toHaveLength(1);
  });

  it('leaves an intent the customer has not paid alone, and refuses to cancel a captured payment', async () => {
    const waiting = await checkedOutOrder(2222);
    expect(await callStore('cancelAuthorization', { order_id: 2222 })).toEqual({ status: 200, body: { canceled: false } });
    expect(providers.stripe.retrieve(waiting).status).toBe('requires_payment_method');

    await authorizedOrder(2223);
    await callStore('capture', { order_id: 2223 });
    expect((await callStore('cancelAuthorization', { order_id: 2223 })).body.error).toMatch(/already captured: refund it instead/);
    expect(cancelCalls()).toEqual([]);
  });
});
