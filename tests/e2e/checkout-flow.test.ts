/**
 * End to end over HTTP: the production build (`next start`) against the local
 * WooCommerce and Stripe stand-ins, every endpoint driven as a storefront,
 * Stripe and ShipStation would drive it, with the order's state read back from
 * the WooCommerce stand-in's read-only view.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_SECRETS } from '@/stand-ins/demo/world';
import { cardEvent, deliverCardEvent, deliverShipNotification, shipNotification, signCardEvent } from '@/stand-ins/webhook-deliveries';
import { demoToken, e2eIp, startE2eWorld, type E2eWorld } from '../support/e2e';
import { awayFromWindowEdge } from '../support/requests';

const STOREFRONT = 'https://storefront.e2e.test';
let world: E2eWorld;

beforeAll(async () => {
  world = await startE2eWorld('checkout-flow', { allowedOrigins: [STOREFRONT] });
});

afterAll(async () => {
  await world?.close();
});

interface Answer {
  status: number;
  headers: Headers;
  body: any;
}

async function post(path: string, body: unknown, headers: Record<string, string> = {}): Promise<Answer> {
  const response = await fetch(`${world.service.url}${path}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Origin: STOREFRONT, 'X-Forwarded-For': e2eIp(), ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: response.status, headers: response.headers, body: await response.json().catch(() => undefined) };
}

/** The order as the WooCommerce stand-in shows it over HTTP. */
async function orderState(id: number): Promise<{ status: string; total: string; date_paid: string | null; customer_note: string; meta: Record<string, string>; billing: Record<string, string>; shipping: Record<string, string>; payment_method: string; transaction_id: string }> {
  return (await fetch(`${world.woocommerceUrl}/demo/orders/${id}`)).json();
}

const checkout = async (orderId: number, extra: Record<string, unknown> = {}) => ({
  token: await demoToken(orderId),
  billing_address: { first_name: 'Grace', last_name: 'Hopper', address_1: '1 Harbor Way', city: 'Arlington', state: 'VA', postcode: '22201', country: 'US' },
  shipping_address: null,
  contact_info: { email: 'grace@example.com', phone: '+1 555 0100' },
  ...extra,
});

describe('card payment, from payment intent to shipment', () => {
  it('a guest order is paid by card, becomes processing, then shipped', async () => {
    const intentAnswer = await post('/api/payment-intent', await checkout(1001));
    expect(intentAnswer.status).toBe(200);
    expect(intentAnswer.headers.get('access-control-allow-origin')).toBe(STOREFRONT);
    const { payment_intent_id: intentId, client_secret: clientSecret } = intentAnswer.body;
    expect(intentAnswer.body.success).toBe(true);
    expect(clientSecret).toMatch(new RegExp(`^${intentId}_secret_`));
    expect(world.standIns.stripe.model.intents.get(intentId)).toMatchObject({ amount: 4500, currency: 'usd', metadata: { shop_order_id: '1001' } });

    let order = await orderState(1001);
    expect(order.status).toBe('pending');
    expect(order.meta._payment_intent_id).toBe(intentId);
    expect(order.billing).toMatchObject({ first_name: 'Grace', email: 'grace@example.com', phone: '+1 555 0100' });
    expect(order.shipping).toMatchObject({ first_name: 'Grace', address_1: '1 Harbor Way' });

    // The storefront retries: the same intent comes back.
    expect((await post('/api/payment-intent', await checkout(1001))).body.payment_intent_id).toBe(intentId);

    const paidIntent = world.standIns.stripe.model.succeed(intentId);
    const delivery = await deliverCardEvent(world.service.url, cardEvent('payment_intent.succeeded', paidIntent), DEMO_SECRETS.stripeWebhookSecret);
    expect(delivery).toEqual({ status: 200, body: { received: true } });
    order = await orderState(1001);
    expect(order).toMatchObject({ status: 'processing', payment_method: 'cardprovider', transaction_id: paidIntent.latest_charge });
    expect(order.date_paid).not.toBeNull();
    expect(order.meta).toMatchObject({ _provider_payment_intent_id: intentId, _provider_charge_id: paidIntent.latest_charge });

    // The storefront cannot charge a paid order again.
    const again = await post('/api/payment-intent', await checkout(1001));
    expect(again.status).toBe(400);
    expect(again.body).toEqual({ error: 'Order cannot be paid', details: { orderId: 1001, status: 'processing', reason: 'Order is already paid' } });

    const shipped = await deliverShipNotification(
      world.service.url,
      shipNotification({ orderId: 1001, trackingNumber: '1ZE2E0001', carrier: 'UPS', shipDate: '2026-11-20' }),
      DEMO_SECRETS.shippingWebhookSecret,
    );
    expect(shipped).toEqual({ status: 200, body: { received: true } });
    order = await orderState(1001);
    expect(order.status).toBe('shipped');
    expect(order.customer_note).toBe('Your order has been shipped! Tracking Number: 1ZE2E0001 | Carrier: UPS | Ship Date: 2026-11-20');
    expect(order.meta).toMatchObject({ _tracking_number: '1ZE2E0001', _shipping_carrier: 'UPS', _shipped_date: '2026-11-20' });
  });

  it("a registered customer's declined card restores the cart, and the retry that succeeds clears it", async () => {
    const { payment_intent_id: intentId } = (await post('/api/payment-intent', await checkout(1002))).body;
    const declined = world.standIns.stripe.model.fail(intentId, 'Your card has insufficient funds.');
    expect((await deliverCardEvent(world.service.url, cardEvent('payment_intent.payment_failed', declined), DEMO_SECRETS.stripeWebhookSecret)).status).toBe(200);
    let order = await orderState(1002);
    expect(order.status).toBe('pending');
    expect(order.meta).toMatchObject({ _payment_error: 'Your card has insufficient funds.', _cart_restored_on_failure: 'yes' });
    expect(world.standIns.woocommerce.model.carts.get(42)).toHaveLength(2);

    const paid = world.standIns.stripe.model.succeed(intentId);
    expect((await deliverCardEvent(world.service.url, cardEvent('payment_intent.succeeded', paid), DEMO_SECRETS.stripeWebhookSecret)).status).toBe(200);
    order = await orderState(1002);
    expect(order.status).toBe('processing');
    expect(world.standIns.woocommerce.model.carts.get(42)).toEqual([]);
  });

  it('a yen order is charged in whole yen', async () => {
    const { payment_intent_id: intentId } = (await post('/api/payment-intent', await checkout(1003))).body;
    expect(world.standIns.stripe.model.intents.get(intentId)).toMatchObject({ amount: 4000, currency: 'jpy' });
  });

  it('the intent follows the total WooCommerce recalculates for the address written', async () => {
    world.standIns.woocommerce.model.seed({ id: 2001, lines: [{ total: '100.00' }], shipping_total: '10.00' });
    const answer = await post('/api/payment-intent', await checkout(2001, { billing_address: { first_name: 'Tom', country: 'CA' } }));
    expect(answer.status).toBe(200);
    expect((await orderState(2001)).total).toBe('124.30');
    expect(world.standIns.stripe.model.intents.get(answer.body.payment_intent_id)?.amount).toBe(12430);
  });

  it('a payment whose amount differs from the order total puts the order on hold', async () => {
    world.standIns.woocommerce.model.seed({ id: 2002, lines: [{ total: '20.00' }] });
    const { payment_intent_id: intentId } = (await post('/api/payment-intent', await checkout(2002))).body;
    const paid = { ...world.standIns.stripe.model.succeed(intentId), amount: 1500 };
    expect((await deliverCardEvent(world.service.url, cardEvent('payment_intent.succeeded', paid), DEMO_SECRETS.stripeWebhookSecret)).status).toBe(200);
    expect((await orderState(2002)).status).toBe('on-hold');
  });

  it('the same event delivered twice changes the order once', async () => {
    world.standIns.woocommerce.model.seed({ id: 2003, lines: [{ total: '8.00' }] });
    const { payment_intent_id: intentId } = (await post('/api/payment-intent', await checkout(2003))).body;
    const event = cardEvent('payment_intent.succeeded', world.standIns.stripe.model.succeed(intentId));
    const before = world.standIns.woocommerce.model.get(2003).meta_data.length;
    const answers = await Promise.all([1, 2, 3].map(() => deliverCardEvent(world.service.url, event, DEMO_SECRETS.stripeWebhookSecret)));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200]);
    const order = world.standIns.woocommerce.model.get(2003);
    expect(order.status).toBe('processing');
    expect(order.meta_data.filter((m) => m.key === '_provider_payment_intent_id')).toHaveLength(1);
    expect(order.meta_data.length).toBeGreaterThan(before);
  });
});

describe('manual payment', () => {
  it('submit-order writes the addresses and awaits the payment screenshot', async () => {
    const answer = await post('/api/submit-order', await checkout(1005));
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ success: true, order_id: 1005, total: 2750, currency: 'EUR' });
    const order = await orderState(1005);
    expect(order.status).toBe('pending');
    expect(order.meta._manual_payment_status).toBe('pending-screenshot');
    // WooCommerce keeps _payment_method and _payment_method_title in the order's own fields.
    expect(order).toMatchObject({ payment_method: 'manual', payment_method_title: 'Manual Payment (Zelle / Venmo)' });
    expect(order.shipping).toMatchObject({ first_name: 'Grace', city: 'Arlington' });
    expect(order.customer_note).not.toBe('');
  });

  it('submit-order refuses a paid order', async () => {
    const answer = await post('/api/submit-order', await checkout(1004));
    expect(answer.status).toBe(400);
    expect(answer.body).toEqual({
      error: 'Order cannot be submitted for payment',
      details: { orderId: 1004, status: 'processing', reason: 'Order is already paid' },
    });
  });
});

describe('shipping notifications', () => {
  it('ignores a pending order and refuses a wrong shared secret', async () => {
    expect((await deliverShipNotification(world.service.url, shipNotification({ orderId: 1003 }), DEMO_SECRETS.shippingWebhookSecret)).status).toBe(200);
    expect((await orderState(1003)).status).toBe('pending');
    const wrong = await deliverShipNotification(world.service.url, shipNotification({ orderId: 1004 }), 'not-the-shared-secret-at-all');
    expect(wrong.status).toBe(401);
    expect((await orderState(1004)).status).toBe('processing');
  });
});

describe('error shapes', () => {
  it('an invalid body is 400 with the validation issues', async () => {
    const answer = await post('/api/payment-intent', { token: '' });
    expect(answer.status).toBe(400);
    expect(answer.body.error).toBe('Invalid request');
    expect(Array.isArray(answer.body.details)).toBe(true);
    expect(answer.body.details[0]).toMatchObject({ path: ['token'] });
    const malformed = await post('/api/submit-order', '{not json');
    expect(malformed.status).toBe(400);
    expect(malformed.body.error).toBe('Invalid request');
  });

  it('a bad token is a 500 with the endpoint code and no details in production', async () => {
    const intent = await post('/api/payment-intent', await checkout(1003, { token: 'not-a-token' }));
    expect(intent.status).toBe(500);
    expect(intent.body).toEqual({ success: false, error: { code: 'PAYMENT_INTENT_ERROR', message: expect.any(String) } });
    const submit = await post('/api/submit-order', await checkout(1003, { token: 'not-a-token' }));
    expect(submit.status).toBe(500);
    expect(submit.body.error.code).toBe('SUBMIT_ORDER_ERROR');
    expect(submit.body.error.details).toBeUndefined();
  });

  it('an unlisted origin gets a 500 and no CORS grant; the preflight tells the browser the same', async () => {
    world.standIns.woocommerce.model.seed({ id: 2201 });
    const answer = await post('/api/payment-intent', await checkout(2201), { Origin: 'https://evil.e2e.test' });
    expect(answer.status).toBe(500);
    expect(answer.body.error.code).toBe('PAYMENT_INTENT_ERROR');
    expect(answer.headers.get('access-control-allow-origin')).toBeNull();

    const preflight = (origin: string) =>
      fetch(`${world.service.url}/api/submit-order`, {
        method: 'OPTIONS',
        headers: { Origin: origin, 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'content-type' },
      });
    const allowed = await preflight(STOREFRONT);
    expect(allowed.status).toBe(204);
    expect(allowed.headers.get('access-control-allow-origin')).toBe(STOREFRONT);
    expect(allowed.headers.get('access-control-allow-methods')).toContain('POST');
    const refused = await preflight('https://evil.e2e.test');
    expect(refused.headers.get('access-control-allow-origin')).toBeNull();
    expect((await orderState(2201)).meta).toEqual({});
  });

  it('the card webhook answers a missing or wrong signature with 400 and an unknown event with 200', async () => {
    const missing = await post('/api/cardprovider/webhook', { id: 'evt_x', type: 'payment_intent.succeeded' });
    expect(missing).toMatchObject({ status: 400, body: { error: 'Missing signature' } });
    const event = cardEvent('payment_intent.succeeded', world.standIns.stripe.model.create({ amount: '100', currency: 'usd' }));
    const { payload, signature } = signCardEvent(event, 'whsec_someone_else');
    const forged = await post('/api/stripe/webhook', payload, { 'Stripe-Signature': signature });
    expect(forged.status).toBe(400);
    expect(typeof forged.body.error).toBe('string');
    const other = await deliverCardEvent(world.service.url, { ...event, type: 'charge.refunded' }, DEMO_SECRETS.stripeWebhookSecret);
    expect(other).toEqual({ status: 200, body: { received: true } });
  });
});

describe('rate limit', () => {
  it('the eleventh checkout call in a minute from one address is 429 with the limit headers; another address is unaffected', async () => {
    // The eleven calls must fall in one rate-limit window (windows are aligned to the clock).
    await awayFromWindowEdge();
    const ip = '203.0.113.77';
    const body = { token: '' };
    const statuses: number[] = [];
    let last: Answer | undefined;
    for (let i = 0; i < 11; i += 1) {
      last = await post('/api/submit-order', body, { 'X-Forwarded-For': ip });
      statuses.push(last.status);
    }
    expect(statuses.slice(0, 10)).toEqual(Array(10).fill(400));
    expect(last?.status).toBe(429);
    expect(last?.body).toEqual({ error: 'Too many requests. Please try again later.' });
    expect(last?.headers.get('x-ratelimit-limit')).toBe('10');
    expect(last?.headers.get('x-ratelimit-remaining')).toBe('0');
    expect(new Date(last?.headers.get('x-ratelimit-reset') ?? '').getTime()).toBeGreaterThan(Date.now());
    // payment-intent keeps its own counter, and a forged leftmost X-Forwarded-For entry gets no fresh one.
    expect((await post('/api/payment-intent', body, { 'X-Forwarded-For': ip })).status).toBe(400);
    expect((await post('/api/submit-order', body, { 'X-Forwarded-For': `1.2.3.4, ${ip}` })).status).toBe(429);
    expect((await post('/api/submit-order', body)).status).toBe(400);
  });
});

// Last: the service may remember that the store lacks `shipped` (docs/decisions.md#d9), so this runs after every other shipment.
describe('shipping to a store without the shipped status', () => {
  it('falls back to completed when the store has no shipped status', async () => {
    const woo = world.standIns.woocommerce.model;
    woo.seed({ id: 2101, status: 'processing', date_paid: '2026-11-01T10:00:00' });
    woo.removeStatus('shipped');
    try {
      const answer = await deliverShipNotification(world.service.url, shipNotification({ orderId: 2101 }), DEMO_SECRETS.shippingWebhookSecret);
      expect(answer.status).toBe(200);
      expect((await orderState(2101)).status).toBe('completed');
    } finally {
      woo.addStatus('shipped');
    }
  });
});
