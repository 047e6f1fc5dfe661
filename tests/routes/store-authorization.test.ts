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
import { resetServices } from '@/lib/services';
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

  it('refuses to cancel a captured payment', async () => {
    await authorizedOrder(2223);
    await callStore('capture', { order_id: 2223 });
    expect((await callStore('cancelAuthorization', { order_id: 2223 })).body.error).toMatch(/already captured: refund it instead/);
    expect(cancelCalls()).toEqual([]);
  });
});

describe('Capture charge checks Stripe and the order when the money would move', () => {
  it('refuses while a Radar review is open at Stripe, even before its event reached the order', async () => {
    const intentId = await authorizedOrder(2231);
    const { review } = providers.stripe.openReview(intentId);

    const answer = await callStore('capture', { order_id: 2231 });
    expect(answer).toEqual({ status: 400, body: { error: expect.stringContaining(`Stripe Radar is reviewing this payment (${review.id})`) } });
    expect(captureCalls()).toEqual([]);

    providers.stripe.closeReview(review.id, 'approved');
    expect(await callStore('capture', { order_id: 2231 })).toEqual({ status: 200, body: { captured: '30.00' } });
  });

  it.each(['cancelled', 'refunded', 'failed'])('refuses an order that is %s, without asking Stripe to capture', async (status) => {
    const intentId = await authorizedOrder(2232);
    providers.woo.orders.get(2232)!.status = status;

    expect(await callStore('capture', { order_id: 2232 })).toEqual({ status: 400, body: { error: `The order is ${status}: its payment is not captured.` } });
    expect(captureCalls()).toEqual([]);
    expect(providers.stripe.retrieve(intentId).status).toBe('requires_capture');
  });

  it('refuses an authorization past its capture_before, without asking Stripe to capture', async () => {
    const intentId = await authorizedOrder(2233);
    providers.stripe.backdateAuthorization(intentId, 7 * 24 * 3600);

    expect((await callStore('capture', { order_id: 2233 })).body.error).toMatch(/The authorization has expired/);
    expect(captureCalls()).toEqual([]);
  });
});

describe('an order cancelled while its customer is still paying', () => {
  it('cancel-authorization cancels the intent still waiting for the customer, so it can never be authorized', async () => {
    const waiting = await checkedOutOrder(2241);
    providers.woo.orders.get(2241)!.status = 'cancelled';

    expect(await callStore('cancelAuthorization', { order_id: 2241 })).toEqual({ status: 200, body: { canceled: true } });
    expect(providers.stripe.retrieve(waiting).status).toBe('canceled');
    // The customer's other tab confirms the card: Stripe refuses a canceled intent.
    expect(() => providers.stripe.confirm(waiting, { payment_method: 'pm_card_visa' })).toThrow(/status of canceled/);
    expect(await callStore('cancelAuthorization', { order_id: 2241 })).toEqual({ status: 200, body: { canceled: true } });
    expect(cancelCalls()).toHaveLength(1);
  });

  it('the customer authorizing while the cancel is on its way: the authorization is released all the same', async () => {
    const waiting = await checkedOutOrder(2244);
    providers.woo.orders.get(2244)!.status = 'cancelled';
    providers.stripe.beforeExecute = async ({ path }) => {
      if (path.endsWith('/cancel')) providers.stripe.authorize(waiting);
    };

    expect(await callStore('cancelAuthorization', { order_id: 2244 })).toEqual({ status: 200, body: { canceled: true } });
    expect(providers.stripe.retrieve(waiting)).toMatchObject({ status: 'canceled', amount_capturable: 0 });
  });

  it('a payment captured at once while the cancel is on its way (automatic capture) is refused in words: refund it', async () => {
    useTestEnv({ STORE_CALLBACK_SECRET: TEST_STORE_CALLBACK_SECRET });
    const waiting = await checkedOutOrder(2245);
    providers.woo.orders.get(2245)!.status = 'cancelled';
    providers.stripe.beforeExecute = async ({ path }) => {
      if (path.endsWith('/cancel')) providers.stripe.succeed(waiting);
    };

    expect((await callStore('cancelAuthorization', { order_id: 2245 })).body.error).toMatch(/already captured: refund it instead/);
    expect(providers.stripe.retrieve(waiting).status).toBe('succeeded');
  });

  it('an order reopened afterwards is handed a new intent, never the canceled one', async () => {
    const waiting = await checkedOutOrder(2242);
    providers.woo.orders.get(2242)!.status = 'cancelled';
    await callStore('cancelAuthorization', { order_id: 2242 });
    providers.woo.orders.get(2242)!.status = 'pending';

    const response = await paymentIntentPOST(postJson('/api/payment-intent', { token: await tokenFor(2242) }));
    const { payment_intent_id: handedOut } = (await response.json()) as { payment_intent_id: string };
    expect(handedOut).not.toBe(waiting);
    expect(providers.stripe.retrieve(handedOut).status).toBe('requires_payment_method');
  });

  it('an authorization that arrives for the cancelled order is released at once, with a note for the shop, once', async () => {
    useTestEnv({ STORE_CALLBACK_SECRET: TEST_STORE_CALLBACK_SECRET, STRIPE_CAPTURE: 'on_shipment' });
    const intentId = await checkedOutOrder(2243);
    // Cancelled in the admin without the plugin's call reaching the service; the customer then authorizes.
    providers.woo.orders.get(2243)!.status = 'cancelled';
    providers.stripe.authorize(intentId);
    const authorized = providers.stripe.events.events.filter((e) => e.type === 'payment_intent.amount_capturable_updated').at(-1)!;

    expect((await deliverEvent(authorized)).status).toBe(200);
    expect(providers.stripe.retrieve(intentId)).toMatchObject({ status: 'canceled', amount_capturable: 0 });
    expect(providers.woo.get(2243).status).toBe('cancelled');
    expect(providers.woo.listNotes(2243)).toEqual([
      expect.objectContaining({ customer_note: false, note: expect.stringContaining(`The card payment ${intentId} was released at Stripe`) }),
    ]);

    // Redelivered, and after the memory of applied events is lost: the receipt says it was applied.
    expect((await deliverEvent(authorized)).status).toBe(200);
    resetServices();
    useTestEnv({ STORE_CALLBACK_SECRET: TEST_STORE_CALLBACK_SECRET, STRIPE_CAPTURE: 'on_shipment' });
    expect((await deliverEvent(authorized)).status).toBe(200);
    expect(cancelCalls()).toHaveLength(1);
    expect(providers.woo.listNotes(2243)).toHaveLength(1);
    expect(captureCalls()).toEqual([]);
  });
});
