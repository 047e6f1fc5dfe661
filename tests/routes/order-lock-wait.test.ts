/**
 * The wait for a busy order counts against the request's bound (docs/contract.md, "Time
 * bounds and retries"): a request waits only while its deadline still leaves
 * one UPSTREAM_TIMEOUT_MS for its own work, then answers busy, never a timeout
 * and never past 3 × UPSTREAM_TIMEOUT_MS. The order is held from outside, as
 * another request on this instance would hold it; the only timing assertion
 * is the documented bound, with a generous margin.
 */
import Stripe from 'stripe';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import * as cardWebhook from '@/app/api/cardprovider/webhook/route';
import * as submitOrder from '@/app/api/submit-order/route';
import { RedisOrderLocks } from '@/lib/shared-state/order-locks';
import { getServices, resetServices } from '@/lib/services';
import { REQUEST_BUDGET_TIMEOUTS } from '@/lib/upstream/budget';
import { TEST_WEBHOOK_SECRET, useTestEnv } from '../support/env';
import { createProviders } from '../support/providers';
import { noRedis, REDIS_SKIP_REASON, REDIS_URL, redisConnection, testPrefix } from '../support/redis';
import { freshIp, postJson, tokenFor } from '../support/requests';

const { providers, server } = createProviders();
beforeAll(() => server.listen({ onUnhandledRequest: 'error' }));
afterEach(() => server.resetHandlers());
afterAll(() => server.close());

const TIMEOUT_MS = 300;
const BOUND_MS = REQUEST_BUDGET_TIMEOUTS * TIMEOUT_MS;
/** Room for a loaded machine; a request waiting the whole 30 s lock wait would take far longer. */
const MARGIN_MS = 1_500;

beforeEach(() => {
  useTestEnv({ UPSTREAM_TIMEOUT_MS: String(TIMEOUT_MS) });
  providers.reset();
});

/** Holds `orderId`'s lock, as another request working on it would, until the returned function is called. */
async function holdOrder(orderId: number): Promise<() => Promise<void>> {
  let release!: () => void;
  let entered!: () => void;
  const holding = new Promise<void>((resolve) => (entered = resolve));
  const held = getServices().orderLocks.withOrderLock(orderId, async () => {
    entered();
    await new Promise<void>((resolve) => (release = resolve));
  });
  await holding;
  return async () => {
    release();
    await held;
  };
}

async function timed(run: () => Promise<Response>) {
  const started = Date.now();
  const response = await run();
  return { status: response.status, body: await response.json(), elapsed: Date.now() - started };
}

describe('a request waiting for a busy order answers busy within its bound', () => {
  it('submit-order: 500 busy, within 3 × UPSTREAM_TIMEOUT_MS, the order neither read nor written', async () => {
    providers.woo.seed({ id: 930 });
    const release = await holdOrder(930);
    try {
      const { status, body, elapsed } = await timed(async () =>
        submitOrder.POST(postJson('/api/submit-order', { token: await tokenFor(930), billing_address: { city: 'Leeds' } })),
      );
      expect(status).toBe(500);
      expect(JSON.stringify(body)).toContain('Order is being processed by another request');
      expect(elapsed).toBeLessThan(BOUND_MS + MARGIN_MS);
      expect(providers.callsTo('store')).toEqual([]);
    } finally {
      await release();
    }
  });

  it('card webhook: 400 busy within the bound, so Stripe retries it', async () => {
    providers.woo.seed({ id: 931 });
    const release = await holdOrder(931);
    const payload = JSON.stringify({
      id: 'evt_lock_wait_931',
      type: 'payment_intent.succeeded',
      data: { object: { id: 'pi_lock_wait_931', amount: 1000, currency: 'usd', metadata: { shop_order_id: '931' } } },
    });
    try {
      const { status, body, elapsed } = await timed(() =>
        cardWebhook.POST(
          new Request('http://localhost:3000/api/cardprovider/webhook', {
            method: 'POST',
            headers: { 'x-forwarded-for': freshIp(), 'stripe-signature': Stripe.webhooks.generateTestHeaderString({ payload, secret: TEST_WEBHOOK_SECRET }) },
            body: payload,
          }),
        ),
      );
      expect(status).toBe(400);
      expect(JSON.stringify(body)).toContain('Order is being processed by another request');
      expect(elapsed).toBeLessThan(BOUND_MS + MARGIN_MS);
    } finally {
      await release();
    }
  });

  it('a holder that finishes in time lets the waiter in, and it succeeds', async () => {
    providers.woo.seed({ id: 932 });
    const release = await holdOrder(932);
    // The holder finishes once the request is queued behind it: contended, and ordered without a timer.
    const locks = getServices().orderLocks;
    const take = locks.withOrderLock.bind(locks);
    let queued = false;
    const spy = vi.spyOn(locks, 'withOrderLock').mockImplementation((orderId, task, peek) => {
      const waiting = take(orderId, task, peek);
      queued = true;
      void release();
      return waiting;
    });
    try {
      const { status } = await timed(async () =>
        submitOrder.POST(postJson('/api/submit-order', { token: await tokenFor(932), billing_address: { city: 'Leeds' } })),
      );
      expect(queued).toBe(true);
      expect(status).toBe(200);
    } finally {
      spy.mockRestore();
    }
  });
});

describe.skipIf(noRedis)(`with the lock held by another instance, on Redis${noRedis ? ` (skipped: ${REDIS_SKIP_REASON})` : ''}`, () => {
  it('submit-order and the card webhook answer busy within the bound', async () => {
    const prefix = testPrefix('route-lock-wait');
    resetServices();
    useTestEnv({ UPSTREAM_TIMEOUT_MS: String(TIMEOUT_MS), REDIS_URL, REDIS_KEY_PREFIX: prefix });
    providers.woo.seed({ id: 933 });
    const otherInstance = new RedisOrderLocks(redisConnection(), { prefix, ttlMs: 10_000 });
    let release!: () => void;
    let entered!: () => void;
    const holding = new Promise<void>((resolve) => (entered = resolve));
    const held = otherInstance.withOrderLock(933, async () => {
      entered();
      await new Promise<void>((resolve) => (release = resolve));
    });
    await holding;
    const payload = JSON.stringify({
      id: 'evt_lock_wait_933',
      type: 'payment_intent.succeeded',
      data: { object: { id: 'pi_lock_wait_933', amount: 1000, currency: 'usd', metadata: { shop_order_id: '933' } } },
    });
    try {
      const checkout = await timed(async () =>
        submitOrder.POST(postJson('/api/submit-order', { token: await tokenFor(933), billing_address: { city: 'Leeds' } })),
      );
      expect(checkout.status).toBe(500);
      expect(JSON.stringify(checkout.body)).toContain('Order is being processed by another request');
      expect(checkout.elapsed).toBeLessThan(BOUND_MS + MARGIN_MS);
      const delivery = await timed(() =>
        cardWebhook.POST(
          new Request('http://localhost:3000/api/cardprovider/webhook', {
            method: 'POST',
            headers: { 'x-forwarded-for': freshIp(), 'stripe-signature': Stripe.webhooks.generateTestHeaderString({ payload, secret: TEST_WEBHOOK_SECRET }) },
            body: payload,
          }),
        ),
      );
      expect(delivery.status).toBe(400);
      expect(delivery.elapsed).toBeLessThan(BOUND_MS + MARGIN_MS);
      expect(providers.callsTo('store')).toEqual([]);
    } finally {
      release();
      await held;
      resetServices();
    }
  });
});
