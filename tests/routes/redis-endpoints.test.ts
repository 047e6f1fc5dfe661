/**
 * The endpoints with REDIS_URL set, against a real Redis: what each does when
 * Redis is there, when it is down, and how many Redis round trips each makes.
 * A disposable redis-server per test keeps every key and command count to
 * that test; a "second instance" is the service state rebuilt from scratch
 * (resetServices: new connection, empty memory) against the same Redis.
 */
import Stripe from 'stripe';
import { http, HttpResponse } from 'msw';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { POST as cardWebhook } from '@/app/api/cardprovider/webhook/route';
import { POST as paymentIntent } from '@/app/api/payment-intent/route';
import { POST as shippingWebhook } from '@/app/api/shipping/webhook/route';
import { POST as shipStationWebhook } from '@/app/api/shipstation/webhook/route';
import { POST as submitOrder } from '@/app/api/submit-order/route';
import { getConfig } from '@/lib/config';
import { RedisConnection } from '@/lib/redis/connection';
import { RedisOrderLocks } from '@/lib/shared-state/order-locks';
import { RedisProcessedEvents } from '@/lib/shared-state/processed-events';
import { getServices, resetServices, type Services } from '@/lib/services';
import { handleCardWebhook } from '@/lib/webhooks/card/handle-event';
import { freePort } from '@/stand-ins/loopback-http';
import { TEST_STORE_URL, TEST_WEBHOOK_SECRET, useTestEnv } from '../support/env';
import { createProviders } from '../support/providers';
import { freshIp, postJson, tokenFor } from '../support/requests';
import {
  awayFromWindowEdge,
  monitorRedis,
  noRedis,
  noRedisServerBinary,
  REDIS_SKIP_REASON,
  redisConnection,
  startDisposableRedis,
  testPrefix,
  type DisposableRedis,
} from '../support/redis';
import { loggedLines } from '../support/setup';
import { callStore, TEST_STORE_CALLBACK_SECRET } from '../support/store-callbacks';

const skip = noRedis || noRedisServerBinary;
const reason = noRedis ? REDIS_SKIP_REASON : 'redis-server is not installed (set REDIS_SERVER_BIN)';

const { providers, server: msw } = createProviders();
beforeAll(() => msw.listen({ onUnhandledRequest: 'error' }));
afterEach(() => msw.resetHandlers());
afterAll(() => msw.close());

let redis: DisposableRedis;

function useRedis(url: string): void {
  useTestEnv({ REDIS_URL: url, REDIS_KEY_PREFIX: testPrefix('routes') });
}

beforeEach(() => {
  providers.reset();
});

afterEach(() => {
  resetServices();
});

let eventCounter = 0;
function succeededEvent(orderId: number, amount = 1000) {
  eventCounter += 1;
  return {
    id: `evt_redis_${Date.now()}_${eventCounter}`,
    object: 'event',
    api_version: '2025-08-27.basil',
    created: Math.floor(Date.now() / 1000),
    livemode: false,
    pending_webhooks: 1,
    request: { id: null, idempotency_key: null },
    type: 'payment_intent.succeeded',
    data: {
      object: {
        id: `pi_redis_${orderId}`,
        object: 'payment_intent',
        amount,
        currency: 'usd',
        status: 'succeeded',
        metadata: { shop_order_id: String(orderId) },
        latest_charge: `ch_redis_${orderId}`,
        last_payment_error: null,
      },
    },
  };
}

function failedEvent(orderId: number) {
  const event = succeededEvent(orderId);
  return {
    ...event,
    type: 'payment_intent.payment_failed',
    data: {
      object: {
        ...event.data.object,
        status: 'requires_payment_method',
        latest_charge: null,
        last_payment_error: { code: 'card_declined', message: 'Your card was declined.', type: 'card_error' },
      },
    },
  };
}

function signed(event: unknown) {
  const payload = JSON.stringify(event, null, 2);
  return { payload, signature: Stripe.webhooks.generateTestHeaderString({ payload, secret: TEST_WEBHOOK_SECRET }) };
}

async function deliver(event: unknown) {
  const { payload, signature } = signed(event);
  const response = await cardWebhook(
    new Request('http://localhost:3000/api/cardprovider/webhook', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'stripe-signature': signature, 'x-forwarded-for': freshIp() },
      body: payload,
    }),
  );
  return { status: response.status, body: await response.json() };
}

const checkoutBody = async (orderId: number) => ({
  token: await tokenFor(orderId),
  billing_address: { first_name: 'Ada', last_name: 'Lovelace', address_1: '12 Row', city: 'London', postcode: 'N1 7AA', country: 'GB' },
  contact_info: { email: 'ada@example.com', phone: '+44 20 7946 0000' },
});

function fallbackWarnings() {
  return loggedLines().filter((line) => line.event === 'redis.fallback_to_memory');
}

describe.skipIf(skip)(`endpoints with shared state in Redis${skip ? ` (skipped: ${reason})` : ''}`, () => {
  beforeEach(async () => {
    redis = await startDisposableRedis();
  });

  afterEach(async () => {
    await redis.stop();
  });

  it('checkout counts its rate limit in Redis, so a new instance continues the same window', async () => {
    useRedis(redis.url);
    await awayFromWindowEdge();
    const ip = freshIp();
    for (let i = 0; i < 10; i += 1) {
      expect((await submitOrder(postJson('/api/submit-order', {}, { ip }))).status).toBe(400);
      // Every other request lands on a "new instance" with empty memory.
      if (i % 2 === 1) resetServices();
    }
    const eleventh = await submitOrder(postJson('/api/submit-order', {}, { ip }));
    expect(eleventh.status).toBe(429);
    expect(eleventh.headers.get('x-ratelimit-limit')).toBe('10');
    // Over the limit, a request that would take the order's lock is refused by the lock's own script: no
    // lock, no store call. One from a refused origin is answered 429 too: the limit still comes first.
    providers.woo.seed({ id: 320, lines: [{ total: '10.00' }] });
    expect((await submitOrder(postJson('/api/submit-order', await checkoutBody(320), { ip }))).status).toBe(429);
    expect((await submitOrder(postJson('/api/submit-order', await checkoutBody(320), { ip, origin: 'https://elsewhere.example' }))).status).toBe(429);
    expect(providers.callsTo('store')).toEqual([]);
    expect(await (await redisConnection(redis.url).client()).keys('*lock:order:320')).toEqual([]);
  });

  it('an event applied on one instance is answered on the next without touching the store', async () => {
    useRedis(redis.url);
    providers.woo.seed({ id: 301, lines: [{ total: '10.00' }] });
    const event = succeededEvent(301);
    expect(await deliver(event)).toEqual({ status: 200, body: { received: true } });
    const writes = providers.orderUpdates(301).length;
    expect(writes).toBe(1);

    resetServices();
    const callsBefore = providers.calls.length;
    expect(await deliver(event)).toEqual({ status: 200, body: { received: true } });
    expect(providers.calls.length).toBe(callsBefore);
    expect(providers.orderUpdates(301)).toHaveLength(1);
  });

  it('a lock that expires while its holder works lets the next writer in, and the status gate makes it write nothing', async () => {
    useRedis(redis.url);
    providers.woo.seed({ id: 302, lines: [{ total: '10.00' }], customer_id: 42 });
    // Instance A writes the order, then is held up clearing the cart, past its lock's TTL: the cart
    // call tells the test it has started (A's write is done) and answers only when the test says so.
    let cartCalls = 0;
    let aClearingCart!: () => void;
    const aInCartCall = new Promise<void>((resolve) => (aClearingCart = resolve));
    let releaseA!: () => void;
    const aReleased = new Promise<void>((resolve) => (releaseA = resolve));
    msw.use(
      http.delete(`${TEST_STORE_URL}/wp-json/wc-checkout-bridge/v1/customers/42/cart`, async () => {
        cartCalls += 1;
        aClearingCart();
        await aReleased;
        return HttpResponse.json({ cleared: true });
      }),
    );
    const base = getServices();
    const prefix = getConfig().redisKeyPrefix;
    const instance = (connection: RedisConnection): Services => ({
      ...base,
      cardEventLocks: new RedisOrderLocks(connection, { prefix, ttlMs: 250, waitMs: 5_000 }),
      processedEvents: new RedisProcessedEvents(connection, { prefix }),
    });
    // A generous Redis timeout: the lock's expiry is under test here, not a slow connection on a busy machine.
    const a = instance(redisConnection(redis.url, 5_000));
    const b = instance(redisConnection(redis.url, 5_000));
    const event = succeededEvent(302);
    const { payload, signature } = signed(event);

    const onA = handleCardWebhook(payload, signature, a, {});
    await aInCartCall;
    const contextB: { outcome?: string } = {};
    // B waits for the lock until A's expires (250 ms; B would wait up to 5 s); A has not remembered
    // the event yet, so only the gate stands.
    await handleCardWebhook(payload, signature, b, contextB);
    expect(contextB.outcome).toBe('already_paid');
    releaseA();
    await onA;

    expect(providers.orderUpdates(302)).toHaveLength(1);
    expect(providers.woo.get(302).status).toBe('processing');
    expect(cartCalls).toBe(1);
  });

  it('the card webhook answers 400 while Redis is down and applies the retry once Redis is back', async () => {
    useRedis(redis.url);
    providers.woo.seed({ id: 303, lines: [{ total: '10.00' }] });
    await redis.stop();
    const event = succeededEvent(303);
    const refused = await deliver(event);
    expect(refused.status).toBe(400);
    expect(refused.body).toEqual({ error: 'Shared state is unavailable, try again' });
    expect(providers.callsTo('store')).toEqual([]);

    await redis.restart();
    resetServices();
    expect(await deliver(event)).toEqual({ status: 200, body: { received: true } });
    expect(providers.woo.get(303).status).toBe('processing');
  });

  it('checkout keeps working while Redis is down: in-process limit and lock, one warning a minute', async () => {
    useRedis(`redis://127.0.0.1:${await freePort()}`);
    providers.woo.seed({ id: 304, lines: [{ total: '10.00' }] });
    providers.woo.seed({ id: 305, lines: [{ total: '10.00' }] });
    await awayFromWindowEdge();
    const ip = freshIp();
    const intent = await paymentIntent(postJson('/api/payment-intent', await checkoutBody(304), { ip }));
    expect(intent.status).toBe(200);
    const submitted = await submitOrder(postJson('/api/submit-order', await checkoutBody(305)));
    expect(submitted.status).toBe(200);
    for (let i = 0; i < 9; i += 1) await paymentIntent(postJson('/api/payment-intent', {}, { ip }));
    expect((await paymentIntent(postJson('/api/payment-intent', {}, { ip }))).status).toBe(429);
    expect(fallbackWarnings()).toHaveLength(1);
    expect(loggedLines().filter((line) => line.event === 'redis.lock_release_failed')).toEqual([]);
    expect(JSON.stringify(loggedLines())).not.toContain('redis://');
  });

  it('the shipping webhook keeps working while Redis is down', async () => {
    useRedis(redis.url);
    await redis.stop();
    providers.reset({ customStatuses: ['shipped'] });
    providers.woo.seed({ id: 306, status: 'processing', lines: [{ total: '10.00' }] });
    const response = await shippingWebhook(
      postJson('/api/shipping/webhook', { resource_type: 'SHIP_NOTIFY', order_number: '306', tracking_number: '1Z306', carrier: 'UPS' }, { origin: null }),
    );
    expect(response.status).toBe(200);
    expect(providers.woo.get(306).status).toBe('shipped');
    expect(fallbackWarnings()).toHaveLength(1);
  });

  it('round trips to Redis, seen by MONITOR: 2 per checkout request, 2 per card event, 1 per duplicate, 2 per shipment', async () => {
    useRedis(redis.url);
    const monitor = await monitorRedis(redis.url);
    providers.woo.seed({ id: 310, lines: [{ total: '10.00' }] });
    providers.woo.seed({ id: 311, lines: [{ total: '10.00' }] });
    providers.woo.seed({ id: 312, lines: [{ total: '10.00' }] });
    providers.woo.seed({ id: 313, status: 'processing', lines: [{ total: '10.00' }] });
    providers.woo.seed({ id: 314, status: 'processing', lines: [{ total: '10.00' }] });
    providers.woo.seed({ id: 315, status: 'processing', lines: [{ total: '10.00' }] });
    providers.woo.seed({ id: 316, lines: [{ total: '10.00' }] });
    // Warm up: the connection's handshake and the first load of each script are not per request.
    await deliver(succeededEvent(310));
    const ship = (orderId: number) =>
      shippingWebhook(postJson('/api/shipping/webhook', { resource_type: 'SHIP_NOTIFY', order_number: String(orderId) }, { origin: null }));
    await ship(313);
    await submitOrder(postJson('/api/submit-order', {}));

    try {
      // Each script is one EVALSHA: the entry (rate limit, event check, lock) and the leave (event, release).
      const checkout = await monitor.commandsDuring(async () =>
        expect((await paymentIntent(postJson('/api/payment-intent', await checkoutBody(311)))).status).toBe(200),
      );
      expect(checkout).toEqual(['evalsha', 'evalsha']);
      const submit = await monitor.commandsDuring(async () =>
        expect((await submitOrder(postJson('/api/submit-order', await checkoutBody(312)))).status).toBe(200),
      );
      expect(submit).toEqual(['evalsha', 'evalsha']);
      const event = succeededEvent(311);
      expect(await monitor.commandsDuring(async () => expect((await deliver(event)).status).toBe(200))).toEqual(['evalsha', 'evalsha']);
      expect(providers.woo.get(311).status).toBe('processing');
      // A duplicate: the entry finds the event remembered, takes no lock and leaves nothing to release.
      const duplicate = await monitor.commandsDuring(async () => expect(await deliver(event)).toEqual({ status: 200, body: { received: true } }));
      expect(duplicate).toEqual(['evalsha']);
      expect(await (await redisConnection(redis.url).client()).keys('*lock:order:311')).toEqual([]);
      // A failed payment: the same two scripts.
      const failed = await monitor.commandsDuring(async () => expect((await deliver(failedEvent(316))).status).toBe(200));
      expect(failed).toEqual(['evalsha', 'evalsha']);
      expect(providers.orderUpdates(316)).toHaveLength(1);
      // Shipping: the entry (rate limit, lock, and whether the store lacks `shipped`), the leave.
      expect(await monitor.commandsDuring(async () => expect((await ship(314)).status).toBe(200))).toEqual(['evalsha', 'evalsha']);
      expect(providers.woo.get(314).status).toBe('completed');
      // The same shipment again: the order is shipped already, nothing is written, and the count is the same.
      const updates = providers.orderUpdates(314).length;
      expect(await monitor.commandsDuring(async () => expect((await ship(314)).status).toBe(200))).toEqual(['evalsha', 'evalsha']);
      expect(providers.orderUpdates(314)).toHaveLength(updates);
      // ShipStation's own name for the route: the same handler, the same count.
      const alias = await monitor.commandsDuring(async () =>
        expect(
          (await shipStationWebhook(postJson('/api/shipstation/webhook', { resource_type: 'SHIP_NOTIFY', order_number: '315' }, { origin: null }))).status,
        ).toBe(200),
      );
      expect(alias).toEqual(['evalsha', 'evalsha']);
      // A request with no script to carry its hit (the body is refused before any lock) counts it alone: one trip.
      const refused = await monitor.commandsDuring(async () => expect((await submitOrder(postJson('/api/submit-order', {}))).status).toBe(400));
      expect(refused).toEqual(['evalsha']);
    } finally {
      await monitor.close();
    }
  });

  it("round trips to Redis for the store's calls (no rate limit): 2 per capture, the lock's entry and leave", async () => {
    useTestEnv({ REDIS_URL: redis.url, REDIS_KEY_PREFIX: testPrefix('routes'), STORE_CALLBACK_SECRET: TEST_STORE_CALLBACK_SECRET, STRIPE_CAPTURE: 'manual' });
    const monitor = await monitorRedis(redis.url);
    const authorized = async (orderId: number) => {
      providers.woo.seed({ id: orderId, lines: [{ total: '10.00' }] });
      const response = await paymentIntent(postJson('/api/payment-intent', await checkoutBody(orderId)));
      providers.stripe.authorize(((await response.json()) as { payment_intent_id: string }).payment_intent_id);
    };
    await authorized(330);
    await authorized(331);
    // Warm up, as above.
    expect((await callStore('capture', { order_id: 330 })).status).toBe(200);
    try {
      const capture = await monitor.commandsDuring(async () => expect((await callStore('capture', { order_id: 331 })).status).toBe(200));
      expect(capture).toEqual(['evalsha', 'evalsha']);
    } finally {
      await monitor.close();
    }
  });
});
