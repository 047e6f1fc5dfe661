/**
 * Bounded time and read retries (docs/decisions.md#d34): every
 * endpoint answers within REQUEST_BUDGET_TIMEOUTS × UPSTREAM_TIMEOUT_MS even
 * when an upstream hangs (the Stripe SDK's own retries included), reads are
 * retried once on a network error, a timeout or a 5xx while time remains,
 * and writes are not repeated (a Stripe create with its idempotency key may be).
 *
 * The stand-ins that hang never answer; the only timing assertion is that the
 * answer came before the documented bound, with a generous margin.
 */
import Stripe from 'stripe';
import { delay, http, HttpResponse } from 'msw';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import * as cardWebhook from '@/app/api/cardprovider/webhook/route';
import * as paymentIntent from '@/app/api/payment-intent/route';
import * as shippingWebhook from '@/app/api/shipping/webhook/route';
import * as submitOrder from '@/app/api/submit-order/route';
import { StoreError } from '@/lib/errors';
import { getServices } from '@/lib/services';
import { REQUEST_BUDGET_TIMEOUTS, withRequestDeadline } from '@/lib/upstream/budget';
import { TEST_STORE_URL, TEST_WEBHOOK_SECRET, useTestEnv } from '../support/env';
import { createProviders } from '../support/providers';
import { freshIp, postJson, tokenFor } from '../support/requests';
import { loggedLines } from '../support/setup';
import { SHIPSTATION_BASE_URL, SHIPSTATION_ENV } from '../support/shipstation';

const { providers, server } = createProviders();
beforeAll(() => server.listen({ onUnhandledRequest: 'error' }));
afterEach(() => server.resetHandlers());
afterAll(() => server.close());

// A second per call: a busy machine's work before the hung call (a module's first load, the store's read) stays well inside the bound.
const TIMEOUT_MS = 1_000;
const BOUND_MS = REQUEST_BUDGET_TIMEOUTS * TIMEOUT_MS;
/** Room for a loaded machine; a request that ignored the bound would take far longer (the stand-ins never answer). */
const MARGIN_MS = 1_500;

beforeEach(() => {
  useTestEnv({ ...SHIPSTATION_ENV, UPSTREAM_TIMEOUT_MS: String(TIMEOUT_MS) });
  providers.reset();
});

const ORDER_PATH = `${TEST_STORE_URL}/wp-json/wc/v3/orders/:id`;
const STRIPE = 'https://api.stripe.com/v1';
let hangs = 0;
const hang = async () => {
  hangs += 1;
  await delay('infinite');
  return HttpResponse.json({});
};

beforeEach(() => {
  hangs = 0;
});

async function timed(run: () => Promise<Response>) {
  const started = Date.now();
  const response = await run();
  return { response, body: await response.json(), elapsed: Date.now() - started };
}

function cardDelivery(orderId: number) {
  const payload = JSON.stringify({
    id: `evt_bound_${orderId}`,
    type: 'payment_intent.succeeded',
    data: { object: { id: `pi_bound_${orderId}`, amount: 1000, currency: 'usd', metadata: { shop_order_id: String(orderId) } } },
  });
  return new Request('http://localhost:3000/api/cardprovider/webhook', {
    method: 'POST',
    headers: {
      'x-forwarded-for': freshIp(),
      'stripe-signature': Stripe.webhooks.generateTestHeaderString({ payload, secret: TEST_WEBHOOK_SECRET }),
    },
    body: payload,
  });
}

describe('every endpoint answers within its bound when an upstream hangs', () => {
  it('payment-intent, Stripe create hanging: 500 within the bound, the create sent at most twice with one key', async () => {
    providers.woo.seed({ id: 901 });
    const keys: (string | null)[] = [];
    server.use(
      http.post(`${STRIPE}/payment_intents`, async ({ request }) => {
        keys.push(request.headers.get('idempotency-key'));
        return hang();
      }),
    );

    const { response, body, elapsed } = await timed(async () => paymentIntent.POST(postJson('/api/payment-intent', { token: await tokenFor(901) })));

    expect(response.status).toBe(500);
    expect(body.error).toMatchObject({ code: 'PAYMENT_INTENT_ERROR', message: 'Payment provider request failed: create payment intent' });
    expect(elapsed).toBeLessThan(BOUND_MS + MARGIN_MS);
    // At most our one retry (when time remains after the first), and no SDK retry inside either.
    expect(keys.length).toBeLessThanOrEqual(2);
    expect(new Set(keys).size).toBe(1);
    expect(providers.orderUpdates()).toHaveLength(0);
  });

  it('payment-intent, Stripe retrieve hanging: 500 within the bound', async () => {
    const intent = providers.stripe.create({ amount: '1000', currency: 'usd', metadata: { shop_order_id: '902' } });
    providers.woo.seed({ id: 902, meta_data: [{ key: '_payment_intent_id', value: intent.id }] });
    server.use(http.get(`${STRIPE}/payment_intents/:id`, hang));

    const { response, body, elapsed } = await timed(async () => paymentIntent.POST(postJson('/api/payment-intent', { token: await tokenFor(902) })));

    expect(response.status).toBe(500);
    expect(body.error.message).toBe('Payment provider request failed: retrieve payment intent');
    expect(elapsed).toBeLessThan(BOUND_MS + MARGIN_MS);
    expect(hangs).toBeLessThanOrEqual(2);
  });

  it('submit-order, store hanging: 500 within the bound', async () => {
    server.use(http.get(ORDER_PATH, hang));

    const { response, body, elapsed } = await timed(async () =>
      submitOrder.POST(postJson('/api/submit-order', { token: await tokenFor(903), billing_address: { city: 'Leeds' } })),
    );

    expect(response.status).toBe(500);
    expect(body.error).toMatchObject({ code: 'SUBMIT_ORDER_ERROR', message: 'Store request failed: get order' });
    expect(elapsed).toBeLessThan(BOUND_MS + MARGIN_MS);
  });

  it('card webhook, store hanging on the read: 400 within the bound, so Stripe retries later', async () => {
    server.use(http.get(ORDER_PATH, hang));

    const { response, body, elapsed } = await timed(() => cardWebhook.POST(cardDelivery(904)));

    expect(response.status).toBe(400);
    expect(body).toEqual({ error: 'Store request failed: get order' });
    expect(elapsed).toBeLessThan(BOUND_MS + MARGIN_MS);
  });

  it('card webhook, store hanging on the write: 400 within the bound, and the write is sent once', async () => {
    providers.woo.seed({ id: 905 });
    server.use(http.put(ORDER_PATH, hang));

    const { response, body, elapsed } = await timed(() => cardWebhook.POST(cardDelivery(905)));

    expect(response.status).toBe(400);
    expect(body).toEqual({ error: 'Store request failed: update order' });
    expect(elapsed).toBeLessThan(BOUND_MS + MARGIN_MS);
    expect(hangs).toBe(1);
  });

  it('shipping webhook, ShipStation hanging: 200 within the bound, the read failure logged', async () => {
    server.use(http.get(`${SHIPSTATION_BASE_URL}/shipments`, hang));
    const request = postJson('/api/shipping/webhook', { resource_type: 'SHIP_NOTIFY', resource_url: `${SHIPSTATION_BASE_URL}/shipments?batchId=9` }, { origin: null });

    const { response, body, elapsed } = await timed(() => shippingWebhook.POST(request));

    expect(response.status).toBe(200);
    expect(body).toEqual({ received: true });
    expect(elapsed).toBeLessThan(BOUND_MS + MARGIN_MS);
    expect(loggedLines()).toContainEqual(expect.objectContaining({ event: 'shipping.resource_read_failed', failure: 'timeout' }));
  });

  it('shipping webhook, store hanging: 200 within the bound, nothing written', async () => {
    server.use(http.get(ORDER_PATH, hang));
    const request = postJson('/api/shipping/webhook', { resource_type: 'SHIP_NOTIFY', order_number: '906' }, { origin: null });

    const { response, elapsed } = await timed(() => shippingWebhook.POST(request));

    expect(response.status).toBe(200);
    expect(elapsed).toBeLessThan(BOUND_MS + MARGIN_MS);
    expect(providers.orderUpdates()).toHaveLength(0);
  });
});

describe('the request deadline covers all its calls together', () => {
  it('slow answers that each fit the per-call timeout cannot add up past the deadline', async () => {
    // Each answer takes a tenth of a generous per-call timeout, so none is cut by it; forty of them would
    // take 12 s, against a deadline of 6 answers: only the deadline can end the loop within the bound,
    // and the first two answers fit it with 1.2 s to spare on a busy machine.
    const latencyMs = 300;
    const deadlineMs = latencyMs * 6;
    const reads = 40;
    useTestEnv({ ...SHIPSTATION_ENV, UPSTREAM_TIMEOUT_MS: String(latencyMs * 10) });
    providers.woo.seed({ id: 907 });
    providers.setStoreLatency(latencyMs);
    const store = getServices().store();
    const started = Date.now();

    const results = await withRequestDeadline(deadlineMs, async () => {
      const outcomes: string[] = [];
      for (let i = 0; i < reads; i += 1) {
        outcomes.push(await store.getOrder(907).then(() => 'ok', (e: StoreError) => e.failure));
      }
      return outcomes;
    });

    expect(results.slice(0, 2)).toEqual(['ok', 'ok']);
    expect(results.at(-1)).toBe('timeout');
    expect(Date.now() - started).toBeLessThan(deadlineMs + MARGIN_MS);
  });
});

describe('reads are retried once, writes are not', () => {
  const billing = { city: 'Leeds', country: 'GB' };

  it('a store read answered 503 once is read again, and the checkout succeeds', async () => {
    providers.woo.seed({ id: 910 });
    providers.failStore('GET', /\/orders\/910$/, 503, 'internal_server_error');

    const response = await paymentIntent.POST(postJson('/api/payment-intent', { token: await tokenFor(910) }));

    expect(response.status).toBe(200);
    expect(providers.callsTo('store', 'GET', /\/orders\/910$/)).toHaveLength(2);
  });

  it('a store read answered 404 is not read again', async () => {
    const response = await paymentIntent.POST(postJson('/api/payment-intent', { token: await tokenFor(911) }));

    expect(response.status).toBe(500);
    expect(providers.callsTo('store', 'GET')).toHaveLength(1);
  });

  it('a store write answered 503 is not sent again', async () => {
    providers.woo.seed({ id: 912 });
    providers.failStore('PUT', /\/orders\/912$/, 503, 'internal_server_error');

    const response = await submitOrder.POST(postJson('/api/submit-order', { token: await tokenFor(912), billing_address: billing }));

    expect(response.status).toBe(500);
    expect(providers.callsTo('store', 'PUT')).toHaveLength(1);
    expect(providers.woo.get(912).meta_data).toEqual([]);
  });

  it('a Stripe retrieve answered 500 once is read again; an update answered 500 is not sent again', async () => {
    const intent = providers.stripe.create({ amount: '500', currency: 'usd', metadata: { shop_order_id: '913' } });
    providers.woo.seed({ id: 913, meta_data: [{ key: '_payment_intent_id', value: intent.id }] });
    providers.failCard('GET', /\/v1\/payment_intents\/pi_/, 500, 'api_error', 'internal');
    providers.failCard('POST', /\/v1\/payment_intents\/pi_/, 500, 'api_error', 'internal');

    const response = await paymentIntent.POST(postJson('/api/payment-intent', { token: await tokenFor(913) }));

    expect(response.status).toBe(500);
    expect((await response.json()).error.message).toBe('Payment provider request failed: update payment intent');
    expect(providers.callsTo('card', 'GET')).toHaveLength(2);
    expect(providers.callsTo('card', 'POST', /\/v1\/payment_intents\/pi_/)).toHaveLength(1);
    expect(providers.stripe.retrieve(intent.id).amount).toBe(500);
  });

  it('a Stripe create answered 500 once is sent again with the same idempotency key: one intent', async () => {
    providers.woo.seed({ id: 914 });
    providers.failCard('POST', /\/v1\/payment_intents$/, 500, 'api_error', 'internal');

    const response = await paymentIntent.POST(postJson('/api/payment-intent', { token: await tokenFor(914) }));

    expect(response.status).toBe(200);
    const creates = providers.callsTo('card', 'POST', /\/v1\/payment_intents$/);
    expect(creates).toHaveLength(2);
    expect(creates[0]!.headers['idempotency-key']).toBe(creates[1]!.headers['idempotency-key']);
    expect(providers.stripe.intents.size).toBe(1);
  });

  it('a read that fails with too little time left in the request is not retried', async () => {
    providers.woo.seed({ id: 915 });
    providers.failStore('GET', /\/orders\/915$/, 503, 'internal_server_error');
    const store = getServices().store();

    // Enough for one attempt; after it, less than the pause plus a useful attempt.
    const failure = await withRequestDeadline(120, () => store.getOrder(915)).catch((e: unknown) => e);

    expect(failure).toBeInstanceOf(StoreError);
    expect((failure as StoreError).failure).toBe('unavailable');
    expect(providers.callsTo('store', 'GET')).toHaveLength(1);
  });

  it('no call starts when the request has no time left', async () => {
    providers.woo.seed({ id: 916 });
    const store = getServices().store();

    const failure = await withRequestDeadline(50, () => store.getOrder(916)).catch((e: unknown) => e);

    expect((failure as StoreError).failure).toBe('timeout');
    expect(providers.callsTo('store')).toHaveLength(0);
  });
});
