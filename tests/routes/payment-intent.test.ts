import { beforeEach, describe, expect, it } from 'vitest';
import { POST } from '@/app/api/payment-intent/route';
import { intentIdempotencyKey } from '@/lib/checkout/payment-intent';
import { mintCheckoutToken } from '@/lib/security/checkout-token';
import { TEST_TOKEN_SECRET, useTestEnv } from '../support/env';
import { useProviders } from '../support/providers';
import { postJson, tokenFor } from '../support/requests';
import { loggedLines } from '../support/setup';

const providers = useProviders();

beforeEach(() => {
  useTestEnv();
  providers.reset();
});

const billing = {
  first_name: 'Ada',
  last_name: 'Lovelace',
  address_1: '12 Analytical Row',
  city: 'London',
  postcode: 'N1 7AA',
  country: 'GB',
};
const contact = { email: 'ada@example.com', phone: '+44 20 7946 0000' };

async function callPaymentIntent(body: Record<string, unknown>) {
  const response = await POST(postJson('/api/payment-intent', body));
  return { status: response.status, body: await response.json(), headers: response.headers };
}

function metaOf(orderId: number, key: string) {
  return providers.woo.get(orderId).meta_data.filter((m) => m.key === key);
}

describe('POST /api/payment-intent: a new intent', () => {
  it('creates an intent for the server-computed total and stores its id with the addresses in one update', async () => {
    providers.woo.seed({ id: 101, lines: [{ total: '4.35' }, { total: '10.00' }], shipping_total: '5.00', total_tax: '1.94' });

    const { status, body, headers } = await callPaymentIntent({
      token: await tokenFor(101),
      billing_address: billing,
      shipping_address: null,
      contact_info: contact,
      amount: 1, // a client amount is never used
    });

    expect(status).toBe(200);
    const intent = [...providers.stripe.intents.values()][0]!;
    expect(body).toEqual({ success: true, client_secret: intent.client_secret, payment_intent_id: intent.id });
    expect(headers.get('access-control-allow-origin')).toBe('https://storefront.test');

    // Get order, create intent, update order; then the receipt email the order now has.
    expect(providers.calls.map((c) => `${c.method} ${c.path}`)).toEqual([
      'GET /wp-json/wc/v3/orders/101',
      'POST /v1/payment_intents',
      'PUT /wp-json/wc/v3/orders/101',
      `POST /v1/payment_intents/${intent.id}`,
    ]);

    // Created from the order as read (it had no email yet): what any concurrent call would send too.
    const create = providers.callsTo('card', 'POST', /\/v1\/payment_intents$/)[0]!;
    expect(create.body).toEqual({
      amount: '2129',
      currency: 'usd',
      description: 'Order #101',
      metadata: { shop_order_id: '101' },
      // STRIPE_PAYMENT_METHODS defaults to card (docs/decisions.md#d37), so "Credit Card" stays true.
      allowed_payment_method_types: { 0: 'card' },
    });
    expect(create.headers['idempotency-key']).toBe(intentIdempotencyKey({ orderId: 101, amount: 2129, currency: 'USD', replaces: undefined }));
    expect(providers.callsTo('card', 'POST')[1]!.body).toEqual({ receipt_email: 'ada@example.com', metadata: { shop_order_id: '101' } });
    expect(intent.receipt_email).toBe('ada@example.com');

    const [update] = providers.orderUpdates(101);
    expect(update).toMatchObject({
      billing: { ...billing, email: 'ada@example.com', phone: '+44 20 7946 0000' },
      shipping: billing,
    });
    expect(update!.shipping).not.toHaveProperty('email');
    const meta = update!.meta_data as { key: string; value: string }[];
    expect(meta.map((m) => m.key)).toEqual(['_payment_intent_id', '_checkout_address_updated']);
    expect(meta[0]!.value).toBe(intent.id);
    expect(Date.parse(meta[1]!.value)).not.toBeNaN();

    const stored = providers.woo.get(101);
    expect(stored.billing.email).toBe('ada@example.com');
    expect(stored.shipping.city).toBe('London');
    expect(metaOf(101, '_payment_intent_id')).toEqual([expect.objectContaining({ value: intent.id })]);
    expect(intent.amount).toBe(2129);
  });

  it('stores only the intent id when the request carries no address', async () => {
    providers.woo.seed({ id: 102, lines: [{ total: '20.00' }], billing: { email: 'stored@example.com' } });

    const { status, body } = await callPaymentIntent({ token: await tokenFor(102) });

    expect(status).toBe(200);
    expect(providers.orderUpdates(102)).toEqual([{ meta_data: [{ key: '_payment_intent_id', value: body.payment_intent_id }] }]);
    expect(providers.callsTo('card', 'POST')[0]!.body).toMatchObject({ amount: '2000', receipt_email: 'stored@example.com' });
  });

  it('sends Stripe no receipt email for an address the store accepts but Stripe may refuse, and still hands out the intent', async () => {
    providers.woo.seed({ id: 129, lines: [{ total: '20.00' }], billing: { email: 'ada..lovelace@example.com' } });

    const { status } = await callPaymentIntent({ token: await tokenFor(129), contact_info: { email: 'ada..lovelace@example.com', phone: '' } });

    expect(status).toBe(200);
    const sent = providers.callsTo('card', 'POST').map((call) => call.body as Record<string, unknown>);
    expect(sent.length).toBeGreaterThan(0);
    for (const body of sent) expect(body).not.toHaveProperty('receipt_email');
  });

  it('writes the given shipping address, and leaves shipping alone when it is absent', async () => {
    providers.woo.seed({ id: 103, shipping: { city: 'Old Town' } });
    const shipping = { first_name: 'Bob', city: 'Paris', country: 'FR' };
    await callPaymentIntent({ token: await tokenFor(103), billing_address: billing, shipping_address: shipping });
    expect(providers.orderUpdates(103)[0]!.shipping).toEqual(shipping);

    providers.reset();
    providers.woo.seed({ id: 104, shipping: { city: 'Old Town' } });
    await callPaymentIntent({ token: await tokenFor(104), billing_address: billing });
    expect(providers.orderUpdates(104)[0]).not.toHaveProperty('shipping');
    expect(providers.woo.get(104).shipping.city).toBe('Old Town');
  });

  it('sets billing to only email and phone when only contact info is sent', async () => {
    providers.woo.seed({ id: 105, billing: { first_name: 'Kept' } });
    await callPaymentIntent({ token: await tokenFor(105), contact_info: contact });
    expect(providers.orderUpdates(105)[0]!.billing).toEqual(contact);
    expect(providers.woo.get(105).billing).toMatchObject({ first_name: 'Kept', email: 'ada@example.com' });
  });

  it('drops extra keys in address objects, so no other order field can be written', async () => {
    providers.woo.seed({ id: 106 });
    const { status } = await callPaymentIntent({
      token: await tokenFor(106),
      billing_address: { ...billing, status: 'completed', customer_id: 1, meta_data: [{ key: 'x', value: 'y' }], total: '0.01' },
      shipping_address: { ...billing, date_paid: '2020-01-01' },
      contact_info: { ...contact, role: 'admin' },
    });
    expect(status).toBe(200);
    const update = providers.orderUpdates(106)[0]!;
    expect(Object.keys(update).sort()).toEqual(['billing', 'meta_data', 'shipping']);
    expect(Object.keys(update.billing as object).sort()).toEqual([...Object.keys(billing), 'email', 'phone'].sort());
    expect(update.shipping).not.toHaveProperty('date_paid');
    expect(providers.woo.get(106).status).toBe('pending');
  });

  it('charges JPY orders in whole yen', async () => {
    providers.woo.seed({ id: 107, currency: 'JPY', lines: [{ total: '1500' }], shipping_total: '300' });
    const { status } = await callPaymentIntent({ token: await tokenFor(107) });
    expect(status).toBe(200);
    expect(providers.callsTo('card', 'POST')[0]!.body).toMatchObject({ amount: '1800', currency: 'jpy' });
  });

  it('charges KWD orders in fils rounded to a multiple of 10', async () => {
    providers.woo.seed({ id: 108, currency: 'KWD', lines: [{ total: '12.345' }] });
    const { status } = await callPaymentIntent({ token: await tokenFor(108) });
    expect(status).toBe(200);
    expect(providers.callsTo('card', 'POST')[0]!.body).toMatchObject({ amount: '12350', currency: 'kwd' });
  });

  it('brings the intent to the total WooCommerce recalculated after the address write', async () => {
    providers.reset({ taxRates: { DE: 19 } });
    providers.woo.seed({ id: 109, lines: [{ total: '100.00' }] });

    const { status, body } = await callPaymentIntent({
      token: await tokenFor(109),
      billing_address: { ...billing, country: 'DE' },
    });

    expect(status).toBe(200);
    expect(providers.calls.map((c) => `${c.method} ${c.path}`)).toEqual([
      'GET /wp-json/wc/v3/orders/109',
      'POST /v1/payment_intents',
      'PUT /wp-json/wc/v3/orders/109',
      `POST /v1/payment_intents/${body.payment_intent_id}`,
    ]);
    expect(providers.callsTo('card', 'POST')[1]!.body).toEqual({ amount: '11900', metadata: { shop_order_id: '109' } });
    expect(providers.stripe.retrieve(body.payment_intent_id).amount).toBe(11900);
    expect(providers.woo.get(109).total).toBe('119.00');
  });
});

describe('POST /api/payment-intent: the stored intent', () => {
  async function seedWithIntent(orderId: number, intentAmount: number, status?: Parameters<typeof providers.stripe.setStatus>[1]) {
    const intent = providers.stripe.create({ amount: String(intentAmount), currency: 'usd', metadata: { shop_order_id: String(orderId) } });
    if (status) providers.stripe.setStatus(intent.id, status);
    providers.woo.seed({ id: orderId, lines: [{ total: '25.00' }], meta_data: [{ key: '_payment_intent_id', value: intent.id }] });
    return intent;
  }

  it('reuses it unchanged when the amount matches, writing nothing', async () => {
    const intent = await seedWithIntent(201, 2500);
    const { status, body } = await callPaymentIntent({ token: await tokenFor(201) });
    expect(status).toBe(200);
    expect(body).toEqual({ success: true, client_secret: intent.client_secret, payment_intent_id: intent.id });
    expect(providers.calls.map((c) => `${c.method} ${c.path}`)).toEqual([
      'GET /wp-json/wc/v3/orders/201',
      `GET /v1/payment_intents/${intent.id}`,
    ]);
  });

  it('updates amount and order id when the total changed and the intent still awaits a payment method', async () => {
    const intent = await seedWithIntent(202, 1000);
    const { status } = await callPaymentIntent({ token: await tokenFor(202) });
    expect(status).toBe(200);
    expect(providers.callsTo('card', 'POST')).toHaveLength(1);
    expect(providers.callsTo('card', 'POST')[0]!.body).toEqual({ amount: '2500', metadata: { shop_order_id: '202' } });
    expect(providers.stripe.retrieve(intent.id).amount).toBe(2500);
    expect(providers.orderUpdates()).toHaveLength(0);
  });

  it('reuses it unchanged when the amount differs but the intent is past requires_payment_method', async () => {
    const intent = await seedWithIntent(203, 1000, 'requires_action');
    const { status, body } = await callPaymentIntent({ token: await tokenFor(203) });
    expect(status).toBe(200);
    expect(body.payment_intent_id).toBe(intent.id);
    expect(providers.callsTo('card', 'POST')).toHaveLength(0);
    expect(providers.stripe.retrieve(intent.id).amount).toBe(1000);
  });

  it('keeps one _payment_intent_id entry when addresses are written again', async () => {
    const intent = await seedWithIntent(204, 2500);
    await callPaymentIntent({ token: await tokenFor(204), billing_address: billing });
    await callPaymentIntent({ token: await tokenFor(204), billing_address: { ...billing, city: 'Leeds' } });
    expect(metaOf(204, '_payment_intent_id')).toEqual([expect.objectContaining({ value: intent.id })]);
    expect(metaOf(204, '_checkout_address_updated')).toHaveLength(1);
    expect(providers.woo.get(204).billing.city).toBe('Leeds');
    expect(providers.stripe.intents.size).toBe(1);
  });

  it('replaces a canceled intent with a new one', async () => {
    const old = await seedWithIntent(205, 2500, 'canceled');
    const { status, body } = await callPaymentIntent({ token: await tokenFor(205) });
    expect(status).toBe(200);
    expect(body.payment_intent_id).not.toBe(old.id);
    expect(metaOf(205, '_payment_intent_id')).toEqual([expect.objectContaining({ value: body.payment_intent_id })]);
  });

  it('replaces an intent the card provider no longer knows', async () => {
    providers.woo.seed({ id: 206, meta_data: [{ key: '_payment_intent_id', value: 'pi_from_another_account' }] });
    const { status, body } = await callPaymentIntent({ token: await tokenFor(206) });
    expect(status).toBe(200);
    expect(body.payment_intent_id).not.toBe('pi_from_another_account');
    expect(metaOf(206, '_payment_intent_id')).toEqual([expect.objectContaining({ value: body.payment_intent_id })]);
  });
});

describe('POST /api/payment-intent: a stored intent is verified before reuse (DECISIONS 13)', () => {
  it("never hands out another order's intent: a copied id gets a new intent, and the mismatch is logged", async () => {
    const foreign = providers.stripe.create({ amount: '2500', currency: 'usd', metadata: { shop_order_id: '999' } });
    providers.woo.seed({ id: 401, lines: [{ total: '25.00' }], meta_data: [{ key: '_payment_intent_id', value: foreign.id }] });

    const { status, body } = await callPaymentIntent({ token: await tokenFor(401) });

    expect(status).toBe(200);
    expect(body.payment_intent_id).not.toBe(foreign.id);
    expect(body.client_secret).not.toBe(foreign.client_secret);
    expect(providers.stripe.retrieve(body.payment_intent_id).metadata).toEqual({ shop_order_id: '401' });
    expect(metaOf(401, '_payment_intent_id')).toEqual([expect.objectContaining({ value: body.payment_intent_id })]);
    expect(providers.stripe.retrieve(foreign.id).amount).toBe(2500);
    expect(loggedLines()).toContainEqual(
      expect.objectContaining({ level: 'error', event: 'payment_intent.replaced', orderId: 401, reason: 'other_order', intentOrderId: '999' }),
    );
  });

  it('refuses an intent without an order id in its metadata', async () => {
    const anonymous = providers.stripe.create({ amount: '2500', currency: 'usd' });
    providers.woo.seed({ id: 402, lines: [{ total: '25.00' }], meta_data: [{ key: '_payment_intent_id', value: anonymous.id }] });

    const { body } = await callPaymentIntent({ token: await tokenFor(402) });

    expect(body.payment_intent_id).not.toBe(anonymous.id);
    expect(loggedLines()).toContainEqual(expect.objectContaining({ event: 'payment_intent.replaced', reason: 'other_order' }));
  });

  it('replaces an intent in another currency than the order, with a key that cannot reproduce it', async () => {
    const email = 'ada@example.com';
    // This order's own intent, but in a currency the order no longer has (a stale meta value).
    const stale = providers.stripe.create({ amount: '2500', currency: 'eur', metadata: { shop_order_id: '403' } });
    providers.woo.seed({ id: 403, currency: 'USD', lines: [{ total: '25.00' }], billing: { email }, meta_data: [{ key: '_payment_intent_id', value: stale.id }] });

    const { status, body } = await callPaymentIntent({ token: await tokenFor(403) });

    expect(status).toBe(200);
    expect(body.payment_intent_id).not.toBe(stale.id);
    const created = providers.stripe.retrieve(body.payment_intent_id);
    expect(created.currency).toBe('usd');
    const [create] = providers.callsTo('card', 'POST', /\/v1\/payment_intents$/);
    const plainKey = intentIdempotencyKey({ orderId: 403, amount: 2500, currency: 'usd', replaces: undefined });
    expect(create?.headers?.['idempotency-key']).toBe(intentIdempotencyKey({ orderId: 403, amount: 2500, currency: 'usd', replaces: stale.id }));
    expect(create?.headers?.['idempotency-key']).not.toBe(plainKey);
    expect(loggedLines()).toContainEqual(
      expect.objectContaining({ event: 'payment_intent.replaced', orderId: 403, reason: 'other_currency', intentCurrency: 'eur' }),
    );
  });
});

describe('POST /api/payment-intent: exactly once', () => {
  it('six concurrent calls for one order create one intent and store one id', async () => {
    providers.woo.seed({ id: 301, lines: [{ total: '30.00' }] });
    const token = await tokenFor(301);

    const responses = await Promise.all(
      Array.from({ length: 6 }, () => POST(postJson('/api/payment-intent', { token, billing_address: billing }))),
    );
    const bodies = await Promise.all(responses.map((r) => r.json()));

    expect(responses.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 200]);
    expect(new Set(bodies.map((b) => b.payment_intent_id)).size).toBe(1);
    expect(providers.callsTo('card', 'POST', /\/v1\/payment_intents$/)).toHaveLength(1);
    expect(providers.stripe.intents.size).toBe(1);
    expect(metaOf(301, '_payment_intent_id')).toHaveLength(1);
  });

  it('a retry after a failed order update gets the intent already created, not a second one', async () => {
    providers.woo.seed({ id: 302, lines: [{ total: '30.00' }] });
    providers.failStore('PUT', /orders\/302$/, 500, 'internal_server_error');
    const token = await tokenFor(302);

    const first = await callPaymentIntent({ token });
    expect(first.status).toBe(500);
    expect(metaOf(302, '_payment_intent_id')).toHaveLength(0);

    const second = await callPaymentIntent({ token });
    expect(second.status).toBe(200);
    expect(providers.callsTo('card', 'POST', /\/v1\/payment_intents$/)).toHaveLength(2);
    expect(providers.stripe.intents.size).toBe(1);
    expect(metaOf(302, '_payment_intent_id')).toEqual([expect.objectContaining({ value: second.body.payment_intent_id })]);
  });
});

describe('POST /api/payment-intent: refusals', () => {
  it('refuses an already paid order with 400 and touches nothing', async () => {
    providers.woo.seed({ id: 401, status: 'processing', date_paid: '2026-11-01T10:00:00' });
    const { status, body } = await callPaymentIntent({ token: await tokenFor(401), billing_address: billing });
    expect(status).toBe(400);
    expect(body).toEqual({
      error: 'Order cannot be paid',
      details: { orderId: 401, status: 'processing', reason: 'Order is already paid' },
    });
    expect(providers.callsTo('card')).toHaveLength(0);
    expect(providers.orderUpdates()).toHaveLength(0);
  });

  it('refuses an order that is not pending', async () => {
    providers.woo.seed({ id: 402, status: 'on-hold' });
    const { status, body } = await callPaymentIntent({ token: await tokenFor(402) });
    expect(status).toBe(400);
    expect(body.details).toEqual({ orderId: 402, status: 'on-hold', reason: 'Order status is not pending' });
    expect(providers.callsTo('card')).toHaveLength(0);
  });

  it('answers 500 PAYMENT_INTENT_ERROR when the order does not exist', async () => {
    const { status, body } = await callPaymentIntent({ token: await tokenFor(999) });
    expect(status).toBe(500);
    expect(body).toEqual({ success: false, error: { code: 'PAYMENT_INTENT_ERROR', message: 'Store request failed: get order' } });
    expect(providers.callsTo('card')).toHaveLength(0);
  });

  it('answers 500 when the card provider fails, and writes nothing to the order', async () => {
    providers.woo.seed({ id: 403 });
    providers.failCard('POST', /\/v1\/payment_intents$/, 402, 'card_error', 'account_invalid');
    const { status, body } = await callPaymentIntent({ token: await tokenFor(403), billing_address: billing });
    expect(status).toBe(500);
    expect(body.error).toEqual({ code: 'PAYMENT_INTENT_ERROR', message: 'Payment provider request failed: create payment intent' });
    expect(providers.orderUpdates()).toHaveLength(0);
  });

  it('answers 500 when the store update fails', async () => {
    providers.woo.seed({ id: 404 });
    providers.failStore('PUT', /orders\/404$/, 400, 'rest_invalid_param');
    const { status, body } = await callPaymentIntent({ token: await tokenFor(404), billing_address: billing });
    expect(status).toBe(500);
    expect(body.error.message).toBe('Store request failed: update order');
  });

  it('answers 500 with a clear message for an invalid or expired token, before any upstream call', async () => {
    providers.woo.seed({ id: 405 });
    const expired = await mintCheckoutToken(405, { secret: TEST_TOKEN_SECRET, ttl: 60, now: new Date(Date.now() - 3_600_000) });
    for (const token of [expired, 'not-a-token', `${await tokenFor(405)}x`]) {
      const { status, body } = await callPaymentIntent({ token });
      expect(status).toBe(500);
      expect(body).toEqual({ success: false, error: { code: 'PAYMENT_INTENT_ERROR', message: 'Checkout token is invalid or expired' } });
    }
    expect(providers.calls).toHaveLength(0);
  });

  it('shows identifiers in details only in development, never a stack or upstream body', async () => {
    useTestEnv({ NODE_ENV: 'development' });
    const { body } = await callPaymentIntent({ token: await tokenFor(998) });
    expect(body.error.details).toEqual({ operation: 'get order', failure: 'not_found', status: 404, code: 'woocommerce_rest_shop_order_invalid_id' });
    expect(JSON.stringify(body)).not.toMatch(/Invalid ID|at \w+ \(|ck_test|cs_test/);
  });

  it('never logs the token, the email or the address', async () => {
    providers.woo.seed({ id: 406 });
    const token = await tokenFor(406);
    await callPaymentIntent({ token, billing_address: billing, contact_info: contact });
    const logs = JSON.stringify(loggedLines());
    expect(logs).toContain('"route":"/api/payment-intent"');
    expect(logs).toContain('"orderId":406');
    for (const secret of [token, 'ada@example.com', 'Analytical', '+44 20', 'sk_test', 'client_secret', '_secret_']) {
      expect(logs).not.toContain(secret);
    }
  });
});
