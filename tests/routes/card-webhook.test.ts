/**
 * POST /api/cardprovider/webhook (docs/contract.md#spec-4-3, docs/contract.md#spec-5, docs/contract.md#spec-7, docs/contract.md#spec-8; docs/decisions.md#d1, docs/decisions.md#d9, docs/decisions.md#d10, docs/decisions.md#d12).
 *
 * Every delivery is a real Stripe-shaped event signed with the SDK's
 * generateTestHeaderString; the store behind msw is the WooCommerce model, so
 * each test checks the response, the update bodies sent, the resulting order
 * and the cart calls.
 */
import Stripe from 'stripe';
import { beforeEach, describe, expect, it } from 'vitest';
import { POST } from '@/app/api/cardprovider/webhook/route';
import { POST as STRIPE_ALIAS_POST } from '@/app/api/stripe/webhook/route';
import { AMOUNT_MISMATCH_NOTE, paymentFailedNote } from '@/lib/orders/notes';
import { RATE_LIMITS } from '@/lib/shared-state/rate-limit';
import { getServices } from '@/lib/services';
import { TEST_WEBHOOK_SECRET, useTestEnv } from '../support/env';
import { useProviders } from '../support/providers';
import { awayFromWindowEdge, freshIp } from '../support/requests';
import { loggedLines } from '../support/setup';

const providers = useProviders();

beforeEach(() => {
  useTestEnv();
  providers.reset();
});

const ISO_TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{3})?Z$/;
const CUSTOMER_EMAIL = 'grace@example.com';

let eventCounter = 0;

type Intent = Record<string, unknown>;

function intentEvent(type: string, orderId: number | string | null, intent: Intent = {}, id?: string) {
  eventCounter += 1;
  const metadata = orderId === null ? {} : { shop_order_id: String(orderId) };
  return {
    id: id ?? `evt_test_${eventCounter}`,
    object: 'event',
    api_version: '2025-08-27.basil',
    created: Math.floor(Date.now() / 1000),
    livemode: false,
    pending_webhooks: 1,
    request: { id: null, idempotency_key: null },
    type,
    data: {
      object: {
        id: `pi_test_${orderId}`,
        object: 'payment_intent',
        amount: 1000,
        currency: 'usd',
        status: type === 'payment_intent.succeeded' ? 'succeeded' : 'requires_payment_method',
        metadata,
        latest_charge: `ch_test_${orderId}`,
        last_payment_error: null,
        ...intent,
      },
    },
  };
}

const succeeded = (orderId: number | string | null, intent: Intent = {}, id?: string) =>
  intentEvent('payment_intent.succeeded', orderId, intent, id);

const failed = (orderId: number | string | null, intent: Intent = {}, id?: string) =>
  intentEvent('payment_intent.payment_failed', orderId, { latest_charge: null, ...intent }, id);

/** The receipt an applied event leaves on its order, in the same write (docs/decisions.md#d12). */
/** The payment facts written with a card event's change (lib/orders/payment-state.ts): their content is the model's tests' business. */
const receipt = (..._eventIds: string[]) => ({ key: '_cardprovider_payment', value: expect.stringMatching(/^\{.*\}$/) });

interface DeliveryOptions {
  secret?: string;
  /** Seconds since the epoch at which the signature was made. */
  timestamp?: number;
  header?: 'stripe-signature' | 'cardprovider-signature' | null;
  /** Sign this payload but send the body given to deliver(). */
  signedPayload?: string;
  ip?: string;
  handler?: (request: Request) => Promise<Response>;
  path?: string;
}

function webhookRequest(payload: string, options: DeliveryOptions = {}): Request {
  const headers: Record<string, string> = {
    'content-type': 'application/json; charset=utf-8',
    'user-agent': 'Stripe/1.0 (+https://stripe.com/docs/webhooks)',
    'x-forwarded-for': options.ip ?? freshIp(),
  };
  const header = options.header === undefined ? 'stripe-signature' : options.header;
  if (header !== null) {
    headers[header] = Stripe.webhooks.generateTestHeaderString({
      payload: options.signedPayload ?? payload,
      secret: options.secret ?? TEST_WEBHOOK_SECRET,
      ...(options.timestamp === undefined ? {} : { timestamp: options.timestamp }),
    });
  }
  return new Request(`http://localhost:3000${options.path ?? '/api/cardprovider/webhook'}`, {
    method: 'POST',
    headers,
    body: payload,
  });
}

/** Sends one delivery as Stripe would: the pretty-printed event, signed over its exact bytes. */
async function deliver(event: unknown, options: DeliveryOptions = {}) {
  const payload = typeof event === 'string' ? event : JSON.stringify(event, null, 2);
  const request = webhookRequest(payload, options);
  const response = await (options.handler ?? POST)(request);
  return { status: response.status, body: await response.json(), headers: response.headers, request };
}

function storeCalls() {
  return providers.callsTo('store').map((c) => `${c.method} ${c.path}`);
}

function requestLines() {
  return loggedLines().filter((line) => line.event === 'request');
}

type Meta = { id?: number; key: string; value: unknown };

describe('card webhook: signature and request checks', () => {
  it('answers 400 Missing signature when neither signature header is sent, and touches nothing', async () => {
    providers.woo.seed({ id: 201 });
    const { status, body } = await deliver(succeeded(201), { header: null });
    expect(status).toBe(400);
    expect(body).toEqual({ error: 'Missing signature' });
    expect(providers.calls).toEqual([]);
    expect(providers.woo.get(201).status).toBe('pending');
  });

  it('accepts the signature in Stripe-Signature as well as cardprovider-signature', async () => {
    providers.woo.seed({ id: 202 });
    providers.woo.seed({ id: 203 });
    expect((await deliver(succeeded(202), { header: 'stripe-signature' })).body).toEqual({ received: true });
    expect((await deliver(succeeded(203), { header: 'cardprovider-signature' })).body).toEqual({ received: true });
    expect(providers.woo.get(202).status).toBe('processing');
    expect(providers.woo.get(203).status).toBe('processing');
  });

  it('serves the same handler at /api/stripe/webhook', async () => {
    providers.woo.seed({ id: 204 });
    const { status, body } = await deliver(succeeded(204), { handler: STRIPE_ALIAS_POST, path: '/api/stripe/webhook' });
    expect(status).toBe(200);
    expect(body).toEqual({ received: true });
    expect(providers.woo.get(204).status).toBe('processing');
  });

  it('refuses an event signed with another secret with 400 and the verification message', async () => {
    providers.woo.seed({ id: 205 });
    const { status, body } = await deliver(succeeded(205), { secret: 'whsec_someone_else_0123456789' });
    expect(status).toBe(400);
    expect(body).toEqual({ error: expect.stringMatching(/^Webhook Error: No signatures found matching the expected signature/) });
    expect(providers.calls).toEqual([]);
    expect(providers.woo.get(205).status).toBe('pending');
  });

  it('refuses a body changed after signing (an amount raised to match) with 400', async () => {
    providers.woo.seed({ id: 206, lines: [{ total: '50.00' }] });
    const signed = JSON.stringify(succeeded(206, { amount: 100 }), null, 2);
    const tampered = signed.replace('"amount": 100', '"amount": 5000');
    expect(tampered).not.toBe(signed);
    const { status, body } = await deliver(tampered, { signedPayload: signed });
    expect(status).toBe(400);
    expect(body.error).toMatch(/^Webhook Error: No signatures found matching/);
    expect(providers.calls).toEqual([]);
    expect(providers.woo.get(206).status).toBe('pending');
  });

  it('refuses a replayed event whose signature is older than 300 seconds', async () => {
    providers.woo.seed({ id: 207 });
    const stale = Math.floor(Date.now() / 1000) - 301;
    const { status, body } = await deliver(succeeded(207), { timestamp: stale });
    expect(status).toBe(400);
    expect(body).toEqual({ error: 'Webhook Error: Timestamp outside the tolerance zone' });
    expect(providers.calls).toEqual([]);
    expect(providers.woo.get(207).status).toBe('pending');

    // Within the tolerance the same event is accepted.
    const recent = await deliver(succeeded(207), { timestamp: Math.floor(Date.now() / 1000) - 200 });
    expect(recent.status).toBe(200);
  });

  it('refuses a signature header it cannot parse', async () => {
    const request = webhookRequest(JSON.stringify(succeeded(208)), { header: null });
    request.headers.set('stripe-signature', 'garbage');
    const response = await POST(request);
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({ error: 'Webhook Error: Unable to extract timestamp and signatures from header' });
    expect(providers.calls).toEqual([]);
  });

  it('refuses a correctly signed body that is not JSON without quoting it back', async () => {
    const { status, body } = await deliver('not json: secret-looking-body-text');
    expect(status).toBe(400);
    expect(body).toEqual({ error: 'Webhook Error: payload is not a valid event' });
    expect(JSON.stringify(loggedLines())).not.toContain('secret-looking-body-text');
  });

  it('refuses correctly signed JSON that is not an event', async () => {
    const { status, body } = await deliver({ hello: 'world' });
    expect(status).toBe(400);
    expect(body).toEqual({ error: 'Webhook Error: payload is not an event' });
    expect(providers.calls).toEqual([]);
  });

  it('refuses a payment_intent.succeeded event without an amount, before any store call', async () => {
    providers.woo.seed({ id: 209 });
    const event = succeeded(209);
    delete (event.data.object as Record<string, unknown>).amount;
    const { status, body } = await deliver(event);
    expect(status).toBe(400);
    expect(body).toEqual({ error: 'Webhook Error: payment intent has no amount' });
    expect(providers.calls).toEqual([]);
  });

  it('answers 413 for a body over 512 KiB, without verifying or touching anything', async () => {
    providers.woo.seed({ id: 210 });
    const event = succeeded(210, { description: 'x'.repeat(512 * 1024) });
    const { status, body } = await deliver(event);
    expect(status).toBe(413);
    expect(body).toEqual({ error: 'Payload too large' });
    expect(providers.calls).toEqual([]);
  });

  it('checks the signature header before reading the body', async () => {
    const { status, body } = await deliver(succeeded(211, { description: 'x'.repeat(600 * 1024) }), { header: null });
    expect(status).toBe(400);
    expect(body).toEqual({ error: 'Missing signature' });
  });

  it('answers 400 with a clear message when STRIPE_WEBHOOK_SECRET is not configured', async () => {
    useTestEnv({ STRIPE_WEBHOOK_SECRET: undefined });
    providers.woo.seed({ id: 212 });
    const { status, body } = await deliver(succeeded(212));
    expect(status).toBe(400);
    expect(body).toEqual({ error: 'The service is not configured: set STRIPE_WEBHOOK_SECRET' });
    expect(providers.calls).toEqual([]);
  });

  it('accepts a signature made with any of several configured secrets while one is being rolled', async () => {
    const rolled = 'whsec_rolled_in_0123456789';
    useTestEnv({ STRIPE_WEBHOOK_SECRET: `${rolled}, ${TEST_WEBHOOK_SECRET}` });
    providers.woo.seed({ id: 214, total: '10.00' });
    providers.woo.seed({ id: 215, total: '10.00' });
    expect((await deliver(succeeded(214, { id: 'pi_roll_1' }), { secret: rolled })).status).toBe(200);
    expect((await deliver(succeeded(215, { id: 'pi_roll_2' }), { secret: TEST_WEBHOOK_SECRET })).status).toBe(200);
    expect(providers.woo.get(214).status).toBe('processing');
    expect(providers.woo.get(215).status).toBe('processing');

    const stranger = await deliver(succeeded(214), { secret: 'whsec_never_configured_0123' });
    expect(stranger.status).toBe(400);
    expect(stranger.body.error).toMatch(/^Webhook Error: No signatures found matching the expected signature/);
  });

  it('limits each client to 100 deliveries a minute with its own counter, before anything else', async () => {
    const ip = freshIp();
    await awayFromWindowEdge();
    for (let i = 0; i < 100; i += 1) {
      const { status } = await deliver(intentEvent('payment_intent.created', 213), { ip });
      expect(status).toBe(200);
    }
    // Over the limit even a request without a signature gets 429: the limit is checked first.
    const limited = await deliver(intentEvent('payment_intent.created', 213), { ip, header: null });
    expect(limited.status).toBe(429);
    expect(limited.body).toEqual({ error: 'Too many requests' });
    expect(limited.headers.get('x-ratelimit-limit')).toBeNull();
    expect(limited.headers.get('x-ratelimit-remaining')).toBeNull();

    // Another client is unaffected, and so is this client's checkout counter.
    expect((await deliver(intentEvent('payment_intent.created', 213))).status).toBe(200);
    const checkout = await getServices().rateLimiter.hit(RATE_LIMITS.paymentIntent, ip);
    expect(checkout).toMatchObject({ allowed: true, remaining: 9 });
    expect(providers.calls).toEqual([]);
  });

  it('logs one line per request with ids only: no signature, secret, email or body', async () => {
    providers.woo.seed({ id: 214, customer_id: 77, billing: { email: CUSTOMER_EMAIL, address_1: '1 Secret Lane' } });
    const { request } = await deliver(succeeded(214), { path: '/api/cardprovider/webhook' });
    await deliver(succeeded(214), { secret: 'whsec_wrong_secret_0123456789' });

    const lines = requestLines();
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatchObject({
      route: '/api/cardprovider/webhook',
      status: 200,
      orderId: 214,
      eventType: 'payment_intent.succeeded',
      eventId: expect.stringMatching(/^evt_test_/),
      outcome: 'paid',
    });
    expect(lines[1]).toMatchObject({ status: 400, error: 'invalid_signature' });

    const everything = JSON.stringify(loggedLines());
    const signature = request.headers.get('stripe-signature')!;
    expect(everything).not.toContain(signature.split('v1=')[1]!);
    expect(everything).not.toContain(TEST_WEBHOOK_SECRET);
    expect(everything).not.toContain(CUSTOMER_EMAIL);
    expect(everything).not.toContain('Secret Lane');
  });
});

describe('card webhook: payment_intent.succeeded', () => {
  it('marks a guest order processing with the payment meta appended, the payment method and date paid', async () => {
    providers.woo.seed({
      id: 301,
      lines: [{ total: '7.50' }],
      shipping_total: '2.00',
      total_tax: '0.50',
      meta_data: [{ key: '_payment_intent_id', value: 'pi_test_301' }],
    });
    const existingMeta = providers.woo.get(301).meta_data;

    const event = succeeded(301, { amount: 1000 });
    const { status, body } = await deliver(event);

    expect(status).toBe(200);
    expect(body).toEqual({ received: true });
    expect(storeCalls()).toEqual(['GET /wp-json/wc/v3/orders/301', 'PUT /wp-json/wc/v3/orders/301']);

    const [update] = providers.orderUpdates(301);
    expect(update).toEqual({
      status: 'processing',
      payment_method: 'cardprovider',
      payment_method_title: 'Credit Card (cardprovider)',
      transaction_id: 'ch_test_301',
      date_paid: expect.stringMatching(ISO_TIMESTAMP),
      date_paid_gmt: expect.stringMatching(ISO_TIMESTAMP),
      meta_data: [
        ...existingMeta,
        { key: '_provider_payment_intent_id', value: 'pi_test_301' },
        { key: '_provider_charge_id', value: 'ch_test_301' },
        { key: '_paid_date', value: expect.stringMatching(ISO_TIMESTAMP) },
        receipt(event.id),
      ],
    });
    // One moment of payment: date_paid, date_paid_gmt and _paid_date agree.
    const paidDate = (update!.meta_data as Meta[]).find((m) => m.key === '_paid_date')!.value;
    expect(update!.date_paid).toBe(paidDate);
    expect(update!.date_paid_gmt).toBe(paidDate);
    // A guest order has no customer to keep.
    expect(update).not.toHaveProperty('customer_id');

    const order = providers.woo.get(301);
    expect(order.status).toBe('processing');
    expect(order.payment_method).toBe('cardprovider');
    expect(order.payment_method_title).toBe('Credit Card (cardprovider)');
    expect(order.transaction_id).toBe('ch_test_301');
    expect(order.date_paid).not.toBeNull();
    // _paid_date is internal to WooCommerce: stored, but never shown in a REST read.
    expect(order.meta_data.map((m) => m.key)).toEqual([
      '_payment_intent_id',
      '_provider_payment_intent_id',
      '_provider_charge_id',
      '_cardprovider_payment',
    ]);
    expect(providers.woo.hiddenMetaOf(301)._paid_date).toBe(paidDate);
    expect(order.customer_note).toBe('');
    // A guest has no cart to clear.
    expect(providers.callsTo('store', 'DELETE')).toEqual([]);
  });

  it('keeps a registered customer on the order and clears their cart after the update', async () => {
    providers.woo.seed({ id: 302, customer_id: 42 });
    providers.woo.carts.set(42, [{ product_id: 500, quantity: 2 }]);

    const { status, body } = await deliver(succeeded(302));

    expect(status).toBe(200);
    expect(body).toEqual({ received: true });
    expect(storeCalls()).toEqual([
      'GET /wp-json/wc/v3/orders/302',
      'PUT /wp-json/wc/v3/orders/302',
      'DELETE /wp-json/wc-checkout-bridge/v1/customers/42/cart',
    ]);
    expect(providers.orderUpdates(302)[0]).toMatchObject({ status: 'processing', customer_id: 42 });
    expect(providers.woo.get(302)).toMatchObject({ status: 'processing', customer_id: 42 });
    expect(providers.woo.carts.get(42)).toEqual([]);
  });

  it('still records the payment when the cart plugin is not installed, and logs a warning', async () => {
    providers.woo.seed({ id: 303, customer_id: 43 });
    providers.woo.carts.set(43, [{ product_id: 500, quantity: 1 }]);
    providers.woo.cartBridgeInstalled = false;

    const { status, body } = await deliver(succeeded(303));

    expect(status).toBe(200);
    expect(body).toEqual({ received: true });
    expect(providers.woo.get(303).status).toBe('processing');
    expect(providers.callsTo('store', 'DELETE')).toHaveLength(1);
    expect(providers.woo.carts.get(43)).toEqual([{ product_id: 500, quantity: 1 }]);
    expect(loggedLines()).toContainEqual(
      expect.objectContaining({ level: 'warn', event: 'card_webhook.cart_clear_failed', orderId: 303, failure: 'plugin_missing' }),
    );
  });

  it('still records the payment when clearing the cart fails upstream', async () => {
    providers.woo.seed({ id: 304, customer_id: 44 });
    providers.failStore('DELETE', /\/customers\/44\/cart$/, 500, 'internal_server_error');

    const { status } = await deliver(succeeded(304));

    expect(status).toBe(200);
    expect(providers.woo.get(304).status).toBe('processing');
    expect(loggedLines()).toContainEqual(
      expect.objectContaining({ event: 'card_webhook.cart_clear_failed', orderId: 304, failure: 'unavailable' }),
    );
  });

  it.each([
    ['a string', 'ch_string_1', 'ch_string_1'],
    ['an expanded charge object', { id: 'ch_object_1', object: 'charge', amount: 1000 }, 'ch_object_1'],
    ['null', null, ''],
    ['absent', undefined, ''],
  ])('takes the charge id from latest_charge when it is %s', async (_label, latestCharge, expected) => {
    providers.woo.seed({ id: 305 });
    const event = succeeded(305);
    if (latestCharge === undefined) delete (event.data.object as Record<string, unknown>).latest_charge;
    else (event.data.object as Record<string, unknown>).latest_charge = latestCharge;

    expect((await deliver(event)).status).toBe(200);

    const [update] = providers.orderUpdates(305);
    const meta = update!.meta_data as Meta[];
    expect(meta.find((m) => m.key === '_provider_charge_id')?.value).toBe(expected);
    expect(update!.transaction_id).toBe(expected);
    expect(providers.woo.get(305).transaction_id).toBe(expected);
  });

  it('writes the configured payment method for a shop running the official gateway plugin', async () => {
    useTestEnv({ CARD_PAYMENT_METHOD_ID: 'stripe', CARD_PAYMENT_METHOD_TITLE: 'Credit Card (Stripe)' });
    providers.woo.seed({ id: 306 });

    await deliver(succeeded(306));

    const [update] = providers.orderUpdates(306);
    expect(update).toMatchObject({ payment_method: 'stripe', payment_method_title: 'Credit Card (Stripe)' });
    expect(providers.woo.get(306)).toMatchObject({ payment_method: 'stripe', payment_method_title: 'Credit Card (Stripe)' });
  });

  it('puts the order on hold with the mismatch note when the amount paid differs, and leaves the cart alone', async () => {
    providers.woo.seed({ id: 310, customer_id: 45, lines: [{ total: '10.00' }] });
    providers.woo.carts.set(45, [{ product_id: 500, quantity: 1 }]);

    const event = succeeded(310, { amount: 999 });
    const { status, body } = await deliver(event);

    expect(status).toBe(200);
    expect(body).toEqual({ received: true });
    expect(providers.orderUpdates(310)).toEqual([{ status: 'on-hold', customer_note: AMOUNT_MISMATCH_NOTE, meta_data: [receipt(event.id)] }]);
    const order = providers.woo.get(310);
    expect(order).toMatchObject({ status: 'on-hold', customer_note: AMOUNT_MISMATCH_NOTE, payment_method: '', date_paid: null });
    expect(order.meta_data.map(({ key, value }) => ({ key, value }))).toEqual([receipt(event.id)]);
    expect(providers.callsTo('store', 'DELETE')).toEqual([]);
    expect(providers.woo.carts.get(45)).toEqual([{ product_id: 500, quantity: 1 }]);
    expect(loggedLines()).toContainEqual(
      expect.objectContaining({ event: 'card_webhook.amount_mismatch', orderId: 310, paidAmount: 999, expectedAmount: 1000 }),
    );
  });

  it('treats a payment in another currency than the order as a mismatch', async () => {
    providers.woo.seed({ id: 311, currency: 'USD', lines: [{ total: '10.00' }] });
    const event = succeeded(311, { amount: 1000, currency: 'eur' });
    await deliver(event);
    expect(providers.orderUpdates(311)).toEqual([{ status: 'on-hold', customer_note: AMOUNT_MISMATCH_NOTE, meta_data: [receipt(event.id)] }]);
    expect(providers.woo.get(311).status).toBe('on-hold');
  });

  it('compares a JPY order in whole yen (zero-decimal currency)', async () => {
    providers.woo.seed({ id: 312, currency: 'JPY', lines: [{ total: '1500' }], shipping_total: '500' });
    providers.woo.seed({ id: 313, currency: 'JPY', lines: [{ total: '1500' }], shipping_total: '500' });

    await deliver(succeeded(312, { amount: 2000, currency: 'jpy' }));
    // 2000 yen charged as if it had two decimals is a different amount.
    await deliver(succeeded(313, { amount: 200000, currency: 'jpy' }));

    expect(providers.woo.get(312).status).toBe('processing');
    expect(providers.woo.get(313).status).toBe('on-hold');
  });

  it('compares a three-decimal currency with the amount Stripe was asked to charge (rounded to 10)', async () => {
    providers.woo.seed({ id: 314, currency: 'KWD', lines: [{ total: '12.345' }] });
    await deliver(succeeded(314, { amount: 12350, currency: 'kwd' }));
    expect(providers.woo.get(314).status).toBe('processing');
    // The shop is told why Stripe's amount and the order's total differ by a few fils.
    expect((providers.woo.notes.get(314) ?? []).map((n) => n.note)).toEqual([
      "Stripe charged 12.350 KWD for this order's total of 12.345 KWD: Stripe moves KWD in steps of 0.010. A full refund returns the 12.350 charged.",
    ]);
  });

  it('writes no rounding note when the charge is the order total', async () => {
    providers.woo.seed({ id: 319, currency: 'KWD', lines: [{ total: '12.340' }] });
    await deliver(succeeded(319, { amount: 12340, currency: 'kwd' }));
    expect(providers.woo.get(319).status).toBe('processing');
    expect(providers.woo.notes.get(319) ?? []).toEqual([]);
  });

  it.each([
    ['processing', {}],
    ['completed', {}],
    ['on-hold', { date_paid: '2025-01-01T10:00:00' }],
  ])('does nothing to an order that is already paid (%s)', async (orderStatus, extra) => {
    providers.woo.seed({ id: 315, status: orderStatus, customer_id: 46, ...extra });
    const before = providers.woo.get(315);

    const { status, body } = await deliver(succeeded(315));

    expect(status).toBe(200);
    expect(body).toEqual({ received: true });
    expect(storeCalls()).toEqual(['GET /wp-json/wc/v3/orders/315']);
    expect(providers.woo.get(315)).toEqual(before);
    expect(requestLines()[0]).toMatchObject({ outcome: 'already_paid' });
  });

  it('holds an unpaid order that is no longer pending when the amount paid differs (the spec: status as fetched)', async () => {
    providers.woo.seed({ id: 398, status: 'cancelled', lines: [{ total: '30.00' }] });
    await deliver(succeeded(398, { amount: 2500 }));
    expect(providers.woo.get(398)).toMatchObject({ status: 'on-hold', customer_note: AMOUNT_MISMATCH_NOTE });
  });

  it('completes the payment of an unpaid order that is no longer pending: the money was taken', async () => {
    providers.woo.seed({ id: 316, status: 'cancelled' });
    await deliver(succeeded(316));
    expect(providers.woo.get(316).status).toBe('processing');
  });

  it.each([
    ['missing', null],
    ['0', '0'],
    ['not a number', 'abc'],
    ['not an integer', '12.5'],
    ['a number followed by text', '317x'],
    ['negative', '-317'],
  ])('acknowledges an event whose shop_order_id is %s and touches nothing', async (_label, orderId) => {
    providers.woo.seed({ id: 317 });
    const { status, body } = await deliver(succeeded(orderId));
    expect(status).toBe(200);
    expect(body).toEqual({ received: true });
    expect(providers.calls).toEqual([]);
    expect(providers.woo.get(317).status).toBe('pending');
    expect(requestLines()[0]).toMatchObject({ outcome: 'no_order_id' });
  });

  it('answers 400 when the order does not exist, so the payment shows up as failing in Stripe', async () => {
    const { status, body } = await deliver(succeeded(318));
    expect(status).toBe(400);
    expect(body).toEqual({ error: 'Store request failed: get order' });
  });
});

describe('card webhook: payment_intent.payment_failed', () => {
  it('records the failure on a pending guest order without changing its status or touching a cart', async () => {
    providers.woo.seed({ id: 401, meta_data: [{ key: '_payment_intent_id', value: 'pi_test_401' }] });
    const existingMeta = providers.woo.get(401).meta_data;

    const event = failed(401, { last_payment_error: { code: 'card_declined', message: 'Your card was declined.' } });
    const { status, body } = await deliver(event);

    expect(status).toBe(200);
    expect(body).toEqual({ received: true });
    expect(storeCalls()).toEqual(['GET /wp-json/wc/v3/orders/401', 'PUT /wp-json/wc/v3/orders/401']);
    const [update] = providers.orderUpdates(401);
    expect(update).toEqual({
      customer_note: paymentFailedNote('Your card was declined.', false),
      meta_data: [
        ...existingMeta,
        { key: '_payment_failed_at', value: expect.stringMatching(ISO_TIMESTAMP) },
        { key: '_payment_error', value: 'Your card was declined.' },
        { key: '_cart_restored_on_failure', value: 'no' },
        receipt(event.id),
      ],
    });
    const order = providers.woo.get(401);
    expect(order.status).toBe('pending');
    expect(order.customer_note).toBe(
      'Your payment could not be completed: Your card was declined. Please try again or use another payment method.',
    );
    expect(order.meta_data.map((m) => [m.key, m.value])).toEqual([
      ['_payment_intent_id', 'pi_test_401'],
      ['_payment_failed_at', expect.stringMatching(ISO_TIMESTAMP)],
      ['_payment_error', 'Your card was declined.'],
      ['_cart_restored_on_failure', 'no'],
      [receipt(event.id).key, receipt(event.id).value],
    ]);
  });

  it("restores a registered customer's cart from the order first, and says so", async () => {
    providers.woo.seed({ id: 402, customer_id: 50, lines: [{ total: '5.00', quantity: 2 }, { total: '3.00' }] });
    providers.woo.carts.set(50, []);

    const event = failed(402, { last_payment_error: { message: 'Insufficient funds.' } });
    const { status } = await deliver(event);

    expect(status).toBe(200);
    expect(storeCalls()).toEqual([
      'GET /wp-json/wc/v3/orders/402',
      'POST /wp-json/wc-checkout-bridge/v1/customers/50/cart/restore',
      'PUT /wp-json/wc/v3/orders/402',
    ]);
    // Keyed by the event: the plugin restores once per failure, however often it is delivered.
    expect(providers.callsTo('store', 'POST')[0]!.body).toEqual({ order_id: 402, restore_key: event.id });
    expect(providers.woo.carts.get(50)).toEqual([
      { product_id: 500, quantity: 2 },
      { product_id: 501, quantity: 1 },
    ]);
    const [update] = providers.orderUpdates(402);
    expect(update!.customer_note).toBe(paymentFailedNote('Insufficient funds.', true));
    expect(update!.meta_data).toEqual(
      expect.arrayContaining([
        { key: '_payment_error', value: 'Insufficient funds.' },
        { key: '_cart_restored_on_failure', value: 'yes' },
      ]),
    );
    expect(update).not.toHaveProperty('status');
    expect(providers.woo.get(402)).toMatchObject({
      status: 'pending',
      customer_note: 'Your payment could not be completed: Insufficient funds. Your cart has been restored so you can try again.',
    });
  });

  it('records the failure with cart not restored when the plugin is missing, and logs a warning', async () => {
    providers.woo.seed({ id: 403, customer_id: 51 });
    providers.woo.cartBridgeInstalled = false;

    const { status, body } = await deliver(failed(403, { last_payment_error: { message: 'Your card was declined.' } }));

    expect(status).toBe(200);
    expect(body).toEqual({ received: true });
    expect(providers.callsTo('store', 'POST')).toHaveLength(1);
    const [update] = providers.orderUpdates(403);
    expect(update!.customer_note).toBe(paymentFailedNote('Your card was declined.', false));
    expect(update!.meta_data).toContainEqual({ key: '_cart_restored_on_failure', value: 'no' });
    expect(providers.woo.get(403).status).toBe('pending');
    expect(loggedLines()).toContainEqual(
      expect.objectContaining({ level: 'warn', event: 'card_webhook.cart_restore_failed', orderId: 403, failure: 'plugin_missing' }),
    );
  });

  it('records the failure with cart not restored when the restore call fails upstream', async () => {
    providers.woo.seed({ id: 404, customer_id: 52 });
    providers.failStore('POST', /\/cart\/restore$/, 503, 'internal_server_error');

    expect((await deliver(failed(404))).status).toBe(200);
    expect(providers.orderUpdates(404)[0]!.meta_data).toContainEqual({ key: '_cart_restored_on_failure', value: 'no' });
    expect(providers.woo.carts.get(52)).toEqual([]);
  });

  it.each([
    ['null', null],
    ['without a message', { code: 'processing_error' }],
    ['with an empty message', { message: '' }],
  ])('writes Unknown error when last_payment_error is %s', async (_label, lastPaymentError) => {
    providers.woo.seed({ id: 405 });
    await deliver(failed(405, { last_payment_error: lastPaymentError }));
    const [update] = providers.orderUpdates(405);
    expect(update!.customer_note).toBe(paymentFailedNote('Unknown error', false));
    expect(update!.meta_data).toContainEqual({ key: '_payment_error', value: 'Unknown error' });
  });

  it.each(['processing', 'on-hold', 'cancelled'])('leaves an order that is %s alone', async (orderStatus) => {
    providers.woo.seed({ id: 406, status: orderStatus, customer_id: 53 });
    const before = providers.woo.get(406);

    const { status, body } = await deliver(failed(406, { last_payment_error: { message: 'Your card was declined.' } }));

    expect(status).toBe(200);
    expect(body).toEqual({ received: true });
    expect(storeCalls()).toEqual(['GET /wp-json/wc/v3/orders/406']);
    expect(providers.woo.get(406)).toEqual(before);
  });

  it('acknowledges a failure without an order id and touches nothing', async () => {
    const { status, body } = await deliver(failed(null));
    expect(status).toBe(200);
    expect(body).toEqual({ received: true });
    expect(providers.calls).toEqual([]);
  });
});

describe('card webhook: other event types', () => {
  it.each(['payment_intent.created', 'charge.refunded', 'customer.created', 'constructor', '__proto__'])(
    'acknowledges %s with 200 and touches nothing',
    async (type) => {
      providers.woo.seed({ id: 501 });
      const { status, body } = await deliver(intentEvent(type, 501));
      expect(status).toBe(200);
      expect(body).toEqual({ received: true });
      expect(providers.calls).toEqual([]);
      expect(requestLines()[0]).toMatchObject({ eventType: type, outcome: 'ignored_event_type' });
    },
  );
});

describe('card webhook: exactly once', () => {
  it('applies a success delivered twice once: one update, one set of meta, one cart call', async () => {
    providers.woo.seed({ id: 601, customer_id: 60 });
    const event = succeeded(601);

    const first = await deliver(event);
    const second = await deliver(event);

    expect([first.status, second.status]).toEqual([200, 200]);
    expect(second.body).toEqual({ received: true });
    expect(providers.orderUpdates(601)).toHaveLength(1);
    expect(providers.callsTo('store', 'DELETE')).toHaveLength(1);
    // The repeat is recognised by its event id, before the store is asked anything.
    expect(providers.callsTo('store', 'GET')).toHaveLength(1);
    expect(requestLines().map((l) => l.outcome)).toEqual(['paid', 'duplicate_event']);
  });

  it('applies a success delivered eight times at the same moment once', async () => {
    providers.woo.seed({ id: 602, customer_id: 61 });
    const event = succeeded(602);

    const results = await Promise.all(Array.from({ length: 8 }, () => deliver(event)));

    expect(results.map((r) => r.status)).toEqual(Array(8).fill(200));
    expect(results.map((r) => r.body)).toEqual(Array(8).fill({ received: true }));
    expect(providers.orderUpdates(602)).toHaveLength(1);
    expect(providers.callsTo('store', 'DELETE')).toHaveLength(1);
    const keys = providers.woo.get(602).meta_data.map((m) => m.key);
    expect(keys).toEqual(['_provider_payment_intent_id', '_provider_charge_id', '_cardprovider_payment']);
    const outcomes = requestLines().map((l) => l.outcome);
    expect(outcomes.filter((o) => o === 'paid')).toHaveLength(1);
    expect(outcomes.filter((o) => o === 'duplicate_event')).toHaveLength(7);
  });

  it('does not pay an order twice when a second success event (another id) arrives', async () => {
    providers.woo.seed({ id: 603, customer_id: 62 });
    await deliver(succeeded(603));
    await deliver(succeeded(603, { latest_charge: 'ch_second' }));

    expect(providers.orderUpdates(603)).toHaveLength(1);
    expect(providers.callsTo('store', 'DELETE')).toHaveLength(1);
    expect(providers.woo.get(603).transaction_id).toBe('ch_test_603');
    expect(requestLines().map((l) => l.outcome)).toEqual(['paid', 'already_paid']);
  });

  it('puts an order on hold once when a mismatched payment is delivered concurrently', async () => {
    providers.woo.seed({ id: 604 });
    const event = succeeded(604, { amount: 1 });
    await Promise.all(Array.from({ length: 8 }, () => deliver(event)));
    expect(providers.orderUpdates(604)).toEqual([{ status: 'on-hold', customer_note: AMOUNT_MISMATCH_NOTE, meta_data: [receipt(event.id)] }]);
  });

  it('records a failure delivered twice once, with one cart restore', async () => {
    providers.woo.seed({ id: 605, customer_id: 63 });
    const event = failed(605, { last_payment_error: { message: 'Your card was declined.' } });

    await deliver(event);
    await deliver(event);

    expect(providers.orderUpdates(605)).toHaveLength(1);
    expect(providers.callsTo('store', 'POST')).toHaveLength(1);
    expect(providers.woo.get(605).meta_data.filter((m) => m.key === '_payment_error')).toHaveLength(1);
  });

  it('records a failure delivered eight times at the same moment once', async () => {
    providers.woo.seed({ id: 606, customer_id: 64 });
    const event = failed(606, { last_payment_error: { message: 'Your card was declined.' } });

    const results = await Promise.all(Array.from({ length: 8 }, () => deliver(event)));

    expect(results.map((r) => r.status)).toEqual(Array(8).fill(200));
    expect(providers.orderUpdates(606)).toHaveLength(1);
    expect(providers.callsTo('store', 'POST')).toHaveLength(1);
  });

  it('records each distinct failure while the order is pending (a customer who tries twice)', async () => {
    providers.woo.seed({ id: 607 });
    await deliver(failed(607, { last_payment_error: { message: 'Your card was declined.' } }));
    await deliver(failed(607, { last_payment_error: { message: 'Your card has expired.' } }));

    const notes = providers.orderUpdates(607).map((u) => u.customer_note);
    expect(notes).toEqual([
      paymentFailedNote('Your card was declined.', false),
      paymentFailedNote('Your card has expired.', false),
    ]);
    expect(providers.woo.get(607).customer_note).toBe(paymentFailedNote('Your card has expired.', false));
  });

  it('answers 400 on a store outage during the update, changes nothing, and applies the retry', async () => {
    providers.woo.seed({ id: 608, customer_id: 65 });
    providers.woo.carts.set(65, [{ product_id: 500, quantity: 1 }]);
    providers.failStore('PUT', /\/orders\/608$/, 503, 'internal_server_error');
    const event = succeeded(608);

    const outage = await deliver(event);
    expect(outage.status).toBe(400);
    expect(outage.body).toEqual({ error: 'Store request failed: update order' });
    expect(providers.woo.get(608)).toMatchObject({ status: 'pending', date_paid: null, meta_data: [] });
    expect(providers.callsTo('store', 'DELETE')).toEqual([]);
    expect(providers.woo.carts.get(65)).toEqual([{ product_id: 500, quantity: 1 }]);

    // Stripe retries the same event (signed anew); now it applies, once.
    const retry = await deliver(event);
    expect(retry.status).toBe(200);
    expect(retry.body).toEqual({ received: true });
    expect(providers.woo.get(608).status).toBe('processing');
    expect(providers.orderUpdates(608)).toHaveLength(2); // the failed attempt and the retry
    expect(providers.callsTo('store', 'DELETE')).toHaveLength(1);
    expect(providers.woo.carts.get(65)).toEqual([]);
    expect(providers.woo.get(608).meta_data.filter((m) => m.key === '_provider_payment_intent_id')).toHaveLength(1);

    // A further delivery of the event is a duplicate.
    await deliver(event);
    expect(providers.orderUpdates(608)).toHaveLength(2);
  });

  it('answers 400 when the order cannot be fetched, then applies the retry', async () => {
    providers.woo.seed({ id: 609 });
    providers.failStore('GET', /\/orders\/609$/, 502, 'bad_gateway', 2);
    const event = succeeded(609);

    const outage = await deliver(event);
    expect(outage.status).toBe(400);
    expect(outage.body).toEqual({ error: 'Store request failed: get order' });
    expect(providers.orderUpdates(609)).toEqual([]);

    expect((await deliver(event)).status).toBe(200);
    expect(providers.woo.get(609).status).toBe('processing');
  });

  it('applies a failure whose update hit an outage on the retry, restoring the cart to the same items', async () => {
    providers.woo.seed({ id: 610, customer_id: 66, lines: [{ total: '4.00', quantity: 3 }] });
    providers.failStore('PUT', /\/orders\/610$/, 503, 'internal_server_error');
    const event = failed(610, { last_payment_error: { message: 'Your card was declined.' } });

    expect((await deliver(event)).status).toBe(400);
    expect(providers.woo.get(610).meta_data).toEqual([]);

    expect((await deliver(event)).status).toBe(200);
    expect(providers.woo.get(610).meta_data.filter((m) => m.key === '_payment_error')).toHaveLength(1);
    // Restoring rebuilds the cart from the order, so doing it again does not double it.
    expect(providers.woo.carts.get(66)).toEqual([{ product_id: 500, quantity: 3 }]);
  });

  it('never leaks the upstream error body into the response or the log', async () => {
    providers.woo.seed({ id: 611 });
    providers.failStore('PUT', /\/orders\/611$/, 500, 'internal_server_error');
    const { body } = await deliver(succeeded(611));
    expect(JSON.stringify(body)).not.toContain('Upstream failure');
    expect(JSON.stringify(loggedLines())).not.toContain('Upstream failure');
  });
});
