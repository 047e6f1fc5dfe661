/**
 * Every endpoint at the cap on concurrent store calls (STORE_MAX_CONCURRENCY,
 * docs/operations.md "Store shielding"): the one slot is taken by a call held open at the
 * store stand-in (it answers when the test releases it), and each endpoint
 * answers as it must without sending anything to the store. Then the same with
 * the slot held by another instance through Redis, and with Redis down.
 */
import Stripe from 'stripe';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { POST as cardWebhook } from '@/app/api/cardprovider/webhook/route';
import { GET as reconcileRoute } from '@/app/api/cron/reconcile-payments/route';
import { GET as retryShippingRoute } from '@/app/api/cron/retry-shipping/route';
import { GET as healthRoute } from '@/app/api/health/route';
import { POST as paymentIntent } from '@/app/api/payment-intent/route';
import { POST as shippingWebhook } from '@/app/api/shipping/webhook/route';
import { POST as submitOrder } from '@/app/api/submit-order/route';
import { RedisStoreSlots } from '@/lib/shared-state/store-slots';
import { getServices, resetServices } from '@/lib/services';
import type { StripeEvent } from '@/stand-ins/stripe/events';
import { TEST_CRON_SECRET, TEST_WEBHOOK_SECRET, useTestEnv } from '../support/env';
import { useProviders } from '../support/providers';
import { noRedis, noRedisServerBinary, REDIS_SKIP_REASON, REDIS_URL, redisConnection, startDisposableRedis, testPrefix } from '../support/redis';
import { freshIp, postJson, tokenFor } from '../support/requests';
import { loggedLines } from '../support/setup';

const providers = useProviders();

const CAPPED = { STORE_MAX_CONCURRENCY: '1', CRON_SECRET: TEST_CRON_SECRET };

beforeEach(() => {
  useTestEnv(CAPPED);
  providers.reset();
});

afterEach(() => resetServices());

const billing = { first_name: 'Ada', last_name: 'Lovelace', address_1: '12 Row', city: 'London', postcode: 'N1 7AA', country: 'GB' };

async function checkoutRequest(path: string, orderId: number): Promise<Request> {
  return postJson(path, { token: await tokenFor(orderId), billing_address: billing, shipping_address: null });
}

/**
 * A submit-order in flight whose order read the store stand-in holds open: the
 * one slot is taken. `finish` lets the store answer and returns that request's response.
 */
async function slotTakenByACallInFlight(orderId = 900) {
  providers.woo.seed({ id: orderId, total: '10.00' });
  const hold = providers.holdStore('GET', new RegExp(`/orders/${orderId}$`));
  const inFlight = submitOrder(await checkoutRequest('/api/submit-order', orderId));
  await hold.reached;
  const callsBefore = providers.calls.length;
  return {
    /** Store and card calls made since the slot was taken. */
    callsSince: () => providers.calls.slice(callsBefore),
    finish: async () => {
      hold.release();
      return inFlight;
    },
  };
}

function succeededEvent(orderId: number, id = `evt_shield_${orderId}`) {
  return {
    id,
    object: 'event',
    created: Math.floor(Date.now() / 1000),
    type: 'payment_intent.succeeded',
    data: {
      object: {
        id: `pi_shield_${orderId}`,
        object: 'payment_intent',
        amount: 1000,
        currency: 'usd',
        status: 'succeeded',
        metadata: { shop_order_id: String(orderId) },
        latest_charge: `ch_shield_${orderId}`,
      },
    },
  };
}

async function deliver(event: unknown) {
  const payload = JSON.stringify(event);
  const response = await cardWebhook(
    new Request('http://localhost:3000/api/cardprovider/webhook', {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-forwarded-for': freshIp(),
        'stripe-signature': Stripe.webhooks.generateTestHeaderString({ payload, secret: TEST_WEBHOOK_SECRET }),
      },
      body: payload,
    }),
  );
  return { status: response.status, body: await response.json() };
}

const ship = (orderId: number) =>
  shippingWebhook(postJson('/api/shipping/webhook', { resource_type: 'SHIP_NOTIFY', order_number: String(orderId), tracking_number: '1Z999' }, { origin: null }));

async function cron(route: (request: Request) => Promise<Response>, path: string) {
  const response = await route(new Request(`http://localhost:3000${path}`, { headers: { authorization: `Bearer ${TEST_CRON_SECRET}` } }));
  return { status: response.status, body: await response.json() };
}

const metaCount = (orderId: number, key: string) => providers.woo.get(orderId).meta_data.filter((entry) => entry.key === key).length;

describe('checkout at the cap', () => {
  for (const [path, handler] of [
    ['/api/payment-intent', paymentIntent],
    ['/api/submit-order', submitOrder],
  ] as const) {
    it(`${path}: 503 "the shop is busy" with Retry-After, and nothing sent to the store or Stripe; the same call goes through once there is room`, async () => {
      providers.woo.seed({ id: 901, total: '10.00' });
      const slot = await slotTakenByACallInFlight();
      const response = await handler(await checkoutRequest(path, 901));
      expect(response.status).toBe(503);
      const retryAfter = Number(response.headers.get('retry-after'));
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(3);
      expect(await response.json()).toEqual({
        success: false,
        error: { code: 'SHOP_BUSY', message: 'The shop is busy, try again in a few seconds', retry_after_seconds: retryAfter },
      });
      expect(slot.callsSince()).toEqual([]);
      // The shielding at work, not a failure to alert on.
      expect(loggedLines().find((line) => line.event === 'request' && line.status === 503)).toMatchObject({ level: 'warn', error: 'store_busy' });
      expect((await slot.finish()).status).toBe(200);
      expect((await handler(await checkoutRequest(path, 901))).status).toBe(200);
    });
  }

  it('without STORE_MAX_CONCURRENCY there is no cap: the second checkout goes to the store beside the first', async () => {
    useTestEnv({ CRON_SECRET: TEST_CRON_SECRET });
    providers.woo.seed({ id: 902, total: '10.00' });
    const slot = await slotTakenByACallInFlight();
    expect((await submitOrder(await checkoutRequest('/api/submit-order', 902))).status).toBe(200);
    expect((await slot.finish()).status).toBe(200);
  });
});

describe('the webhooks at the cap', () => {
  it('card webhook: 400 so Stripe redelivers, nothing sent to the store; the redelivery applies the payment once', async () => {
    providers.woo.seed({ id: 910, total: '10.00' });
    const slot = await slotTakenByACallInFlight();
    const event = succeededEvent(910);
    expect(await deliver(event)).toEqual({ status: 400, body: { error: 'The shop is busy, try again in a few seconds' } });
    expect(slot.callsSince()).toEqual([]);
    await slot.finish();
    expect(await deliver(event)).toEqual({ status: 200, body: { received: true } });
    expect(await deliver(event)).toEqual({ status: 200, body: { received: true } });
    expect(providers.woo.get(910).status).toBe('processing');
    expect(metaCount(910, '_provider_payment_intent_id')).toBe(1);
  });

  it('shipping webhook: 200, the shipment queued for the replay, which applies it once the store has room', async () => {
    providers.reset({ customStatuses: ['shipped'] });
    providers.woo.seed({ id: 920, status: 'processing' });
    const slot = await slotTakenByACallInFlight();
    const response = await ship(920);
    expect(response.status).toBe(200);
    expect(slot.callsSince()).toEqual([]);
    expect(await getServices().shippingReplay.counts()).toEqual({ waiting: 1, parked: 0 });
    expect(loggedLines().find((line) => line.event === 'shipping.replay_queued')).toMatchObject({ orderId: 920, failure: 'store:busy' });
    await slot.finish();
    const { body } = await cron(retryShippingRoute, '/api/cron/retry-shipping');
    expect(body).toMatchObject({ applied: 1, waiting: 0, complete: true });
    expect(providers.woo.get(920).status).toBe('shipped');
    expect(metaCount(920, '_tracking_number')).toBe(1);
  });
});

describe('the crons at the cap stop their run early and go on next time', () => {
  it('shipping replay: the entry is handed back untouched, no failed attempt counted', async () => {
    providers.reset({ customStatuses: ['shipped'] });
    providers.woo.seed({ id: 930, status: 'processing' });
    providers.failStore('GET', /\/orders\/930$/, 503, 'internal_server_error', 2);
    await ship(930); // queued after a real failure: attempts 1
    const slot = await slotTakenByACallInFlight();
    const { status, body } = await cron(retryShippingRoute, '/api/cron/retry-shipping');
    expect(status).toBe(200);
    expect(body).toMatchObject({ checked: 0, applied: 0, retrying: 0, waiting: 1, complete: false });
    expect(slot.callsSince()).toEqual([]);
    const [entry] = await (getServices().shippingReplay as { waitingEntries?: () => { attempts: number }[] }).waitingEntries!();
    expect(entry?.attempts).toBe(1);
    await slot.finish();
    expect((await cron(retryShippingRoute, '/api/cron/retry-shipping')).body).toMatchObject({ applied: 1, waiting: 0, complete: true });
    expect(providers.woo.get(930).status).toBe('shipped');
  });

  it('payment reconciliation: the event is not counted as failed, and the next run applies it', async () => {
    providers.woo.seed({ id: 940, total: '10.00' });
    const intent = providers.stripe.create({ amount: '1000', currency: 'usd', metadata: { shop_order_id: '940' } });
    providers.stripe.succeed(intent.id);
    expect((providers.stripe.events.events.at(-1) as StripeEvent).type).toBe('payment_intent.succeeded');
    const slot = await slotTakenByACallInFlight();
    const first = await cron(reconcileRoute, '/api/cron/reconcile-payments');
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ checked: 0, applied: 0, failed: [], complete: false });
    expect(slot.callsSince().filter((call) => call.provider === 'store')).toEqual([]);
    expect(loggedLines().some((line) => line.event === 'reconcile.stopped_store_busy')).toBe(true);
    await slot.finish();
    expect((await cron(reconcileRoute, '/api/cron/reconcile-payments')).body).toMatchObject({ applied: 1, failed: [], complete: true });
    expect(providers.woo.get(940).status).toBe('processing');
  });
});

describe('health', () => {
  it('with the cron token reports the cap, its split and the slots in use', async () => {
    useTestEnv({ ...CAPPED, STORE_MAX_CONCURRENCY: '8', STORE_RESERVED_SLOTS: 'webhook:3' });
    const slot = await slotTakenByACallInFlight();
    const response = await healthRoute(new Request('http://localhost:3000/api/health', { headers: { authorization: `Bearer ${TEST_CRON_SECRET}` } }));
    const body = await response.json();
    expect(body.storeSlots).toEqual({
      limit: 8,
      reserved: { checkout: 4, webhook: 3 },
      inUse: { checkout: 1, webhook: 0, background: 0 },
      waiting: 0,
      scope: 'this_instance',
    });
    expect(body.checks.store).toEqual({ ok: true, latencyMs: expect.any(Number) });
    await slot.finish();
  });

  it('at the cap its store probe is not sent either: the store check says busy', async () => {
    const slot = await slotTakenByACallInFlight();
    const response = await healthRoute(new Request('http://localhost:3000/api/health', { headers: { authorization: `Bearer ${TEST_CRON_SECRET}` } }));
    expect(response.status).toBe(503);
    const body = await response.json();
    expect(body.checks.store).toEqual({ ok: false, latencyMs: expect.any(Number), busy: true });
    expect(body.storeSlots).toMatchObject({ limit: 1, inUse: { checkout: 1 } });
    expect(slot.callsSince().filter((call) => call.provider === 'store')).toEqual([]);
    await slot.finish();
  });

  it('without the cap says nothing about slots', async () => {
    useTestEnv({ CRON_SECRET: TEST_CRON_SECRET });
    const response = await healthRoute(new Request('http://localhost:3000/api/health', { headers: { authorization: `Bearer ${TEST_CRON_SECRET}` } }));
    expect(await response.json()).not.toHaveProperty('storeSlots');
  });
});

describe.skipIf(noRedis)(`the cap shared through Redis${noRedis ? ` (skipped: ${REDIS_SKIP_REASON})` : ''}`, () => {
  it("a call in flight on another instance fills the cap for this one: 503 until it gives its slot back", async () => {
    const prefix = testPrefix('shield-routes');
    useTestEnv({ ...CAPPED, REDIS_URL, REDIS_KEY_PREFIX: prefix });
    providers.woo.seed({ id: 950, total: '10.00' });
    const otherInstance = new RedisStoreSlots(redisConnection(), { limit: 1, reserved: { checkout: 0, webhook: 0 } }, { prefix });
    const lease = await otherInstance.tryAcquire({ caller: 'webhook', followUp: false, token: 'other-instance-call', leaseMs: 60_000 });
    expect(lease).toBeDefined();
    expect((await submitOrder(await checkoutRequest('/api/submit-order', 950))).status).toBe(503);
    expect(providers.calls).toEqual([]);
    const health = await healthRoute(new Request('http://localhost:3000/api/health', { headers: { authorization: `Bearer ${TEST_CRON_SECRET}` } }));
    expect((await health.json()).storeSlots).toMatchObject({ limit: 1, inUse: { webhook: 1 }, scope: 'all_instances' });
    await lease?.release();
    expect((await submitOrder(await checkoutRequest('/api/submit-order', 950))).status).toBe(200);
  });
});

describe.skipIf(noRedis || noRedisServerBinary)('with Redis down', () => {
  it('each instance keeps the cap on its own: checkout goes while this instance has room, 503 when it has none', async () => {
    const redis = await startDisposableRedis();
    useTestEnv({ ...CAPPED, REDIS_URL: redis.url, REDIS_KEY_PREFIX: testPrefix('shield-down') });
    await redis.stop();
    providers.woo.seed({ id: 960, total: '10.00' });
    providers.woo.seed({ id: 961, total: '10.00' });
    expect((await submitOrder(await checkoutRequest('/api/submit-order', 960))).status).toBe(200);
    const slot = await slotTakenByACallInFlight();
    expect((await submitOrder(await checkoutRequest('/api/submit-order', 961))).status).toBe(503);
    expect((await slot.finish()).status).toBe(200);
    expect(loggedLines().some((line) => line.event === 'redis.fallback_to_memory')).toBe(true);
  });
});
