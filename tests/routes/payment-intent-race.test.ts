/**
 * One intent per order, whatever the lock can do: two payment-intent calls for
 * one order on two instances, with different bodies, create one intent and
 * hand out one client secret, with Redis down (each instance's lock is its
 * own, so only the Stripe idempotency key stands between them) or slow (the
 * shared lock waits for Redis' late answer). Concurrent calls are ordered by
 * the Stripe stand-in holding a create until the other call arrives, never by
 * a sleep.
 */
import { http } from 'msw';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { preparePaymentIntent } from '@/lib/checkout/payment-intent';
import { paymentIntentRequestSchema } from '@/lib/checkout/schemas';
import { FallbackWarning } from '@/lib/shared-state/fallback';
import { orderLocksWithFallback } from '@/lib/shared-state/order-locks';
import { RedisOrderLocks } from '@/lib/shared-state/order-locks';
import { MemoryOrderLocks } from '@/lib/shared-state/order-locks';
import { getServices, resetServices, type Services } from '@/lib/services';
import { withRequestDeadline } from '@/lib/upstream/budget';
import { stripeApiHandler } from '@/stand-ins/stripe/fetch-handler';
import { TEST_STRIPE_KEY, useTestEnv } from '../support/env';
import { createProviders } from '../support/providers';
import { tokenFor } from '../support/requests';
import { eventually, noRedis, noRedisServerBinary, REDIS_SKIP_REASON, redisConnection, startDisposableRedis, testPrefix } from '../support/redis';
import { loggedLines } from '../support/setup';

const { providers, server } = createProviders();
beforeAll(() => server.listen({ onUnhandledRequest: 'error' }));
afterEach(() => server.resetHandlers());
afterAll(() => server.close());

beforeEach(() => {
  useTestEnv();
  providers.reset();
});

afterEach(() => {
  providers.stripe.beforeExecute = undefined;
  resetServices();
});

const CREATE_URL = 'https://api.stripe.com/v1/payment_intents';
const billing = { first_name: 'Ada', last_name: 'Lovelace', address_1: '12 Analytical Row', city: 'London', postcode: 'N1 7AA', country: 'GB' };

/** Two service instances, each with its own in-process state: what two instances are while Redis is down. */
function twoInstances(): [Services, Services] {
  const first = getServices();
  resetServices();
  return [first, getServices()];
}

/** Two bodies for the same order that differ in everything a request may bring. */
async function twoBodies(orderId: number) {
  const token = await tokenFor(orderId);
  return [
    paymentIntentRequestSchema.parse({ token, billing_address: billing, shipping_address: null, contact_info: { email: 'ada@example.com', phone: '+44 1' } }),
    paymentIntentRequestSchema.parse({ token, billing_address: { ...billing, city: 'Leeds' }, contact_info: { email: 'grace@example.com', phone: '+1 2' } }),
  ] as const;
}

function call(body: Awaited<ReturnType<typeof twoBodies>>[number], services: Services) {
  return withRequestDeadline(30_000, () => preparePaymentIntent(body, services, {}));
}

function storedIntentIds(orderId: number): unknown[] {
  return providers.woo.get(orderId).meta_data.filter((m) => m.key === '_payment_intent_id').map((m) => m.value);
}

describe('two payment-intent calls for one order on two instances with Redis down', () => {
  it('create one intent and hand out one client secret, though their bodies differ (the first create waits for the second)', async () => {
    providers.woo.seed({ id: 801, lines: [{ total: '30.00' }] });
    const [a, b] = twoInstances();
    const [bodyA, bodyB] = await twoBodies(801);
    let creates = 0;
    let secondArrived!: () => void;
    const bothAtStripe = new Promise<void>((resolve) => (secondArrived = resolve));
    // Stripe receives the two creates together: the first is held until the second is there too.
    server.use(
      http.post(CREATE_URL, async () => {
        creates += 1;
        if (creates === 2) secondArrived();
        await bothAtStripe;
        return undefined;
      }),
    );

    const [first, second] = await Promise.all([call(bodyA, a), call(bodyB, b)]);

    expect(creates).toBe(2);
    expect(providers.stripe.intents.size).toBe(1);
    expect(second.payment_intent_id).toBe(first.payment_intent_id);
    expect(second.client_secret).toBe(first.client_secret);
    expect(storedIntentIds(801)).toEqual([first.payment_intent_id]);
    // The two creates were one request to Stripe: same key, same parameters.
    const [createA, createB] = providers.callsTo('card', 'POST', /\/v1\/payment_intents$/);
    expect(createB!.headers['idempotency-key']).toBe(createA!.headers['idempotency-key']);
    expect(createB!.body).toEqual(createA!.body);
  });

  it('a create that meets the other still executing (409) asks again and gets the same intent', async () => {
    providers.woo.seed({ id: 802, lines: [{ total: '30.00' }] });
    const [a, b] = twoInstances();
    const [bodyA, bodyB] = await twoBodies(802);
    const stand_in = stripeApiHandler(providers.stripe, TEST_STRIPE_KEY);
    let releaseFirst!: () => void;
    const firstMayRun = new Promise<void>((resolve) => (releaseFirst = resolve));
    let firstAnswered!: () => void;
    const firstDone = new Promise<void>((resolve) => (firstAnswered = resolve));
    // The first create is held while Stripe "executes" it.
    providers.stripe.beforeExecute = async () => {
      providers.stripe.beforeExecute = undefined;
      await firstMayRun;
    };
    const statuses: number[] = [];
    let creates = 0;
    server.use(
      http.post(CREATE_URL, async ({ request }) => {
        creates += 1;
        if (creates === 1) {
          const answer = await stand_in(request);
          firstAnswered();
          return answer;
        }
        if (creates === 2) {
          // Arrives while the first executes: Stripe answers 409 and saves nothing.
          const answer = await stand_in(request);
          statuses.push(answer.status);
          return answer;
        }
        // Asked again: the first finishes now, and this one gets its answer replayed.
        releaseFirst();
        await firstDone;
        return undefined;
      }),
    );

    const [first, second] = await Promise.all([call(bodyA, a), call(bodyB, b)]);

    expect(statuses).toEqual([409]);
    expect(creates).toBe(3);
    expect(providers.stripe.intents.size).toBe(1);
    expect(second.client_secret).toBe(first.client_secret);
    expect(storedIntentIds(802)).toEqual([first.payment_intent_id]);
    expect(loggedLines()).toContainEqual(expect.objectContaining({ event: 'payment_intent.key_refused', orderId: 802, refusal: 'in_progress' }));
  });

  it('a key that an earlier, never stored create used with another email gets a key of its own: the call succeeds', async () => {
    providers.woo.seed({ id: 803, lines: [{ total: '30.00' }], billing: { email: 'old@example.com' } });
    const token = await tokenFor(803);
    // The first call creates its intent, and the store refuses the write that would have stored it.
    providers.failStore('PUT', /\/orders\/803$/, 500, 'internal_server_error');
    await expect(call(paymentIntentRequestSchema.parse({ token }), getServices())).rejects.toMatchObject({ kind: 'store' });
    const [orphan] = [...providers.stripe.intents.values()];
    expect(orphan?.receipt_email).toBe('old@example.com');
    // Meanwhile the order's email changed (the customer submitted it for manual payment, say).
    providers.woo.update(803, { billing: { email: 'new@example.com' } });

    const answer = await call(paymentIntentRequestSchema.parse({ token }), getServices());

    expect(answer.payment_intent_id).not.toBe(orphan!.id);
    expect(providers.stripe.retrieve(answer.payment_intent_id).receipt_email).toBe('new@example.com');
    expect(storedIntentIds(803)).toEqual([answer.payment_intent_id]);
    expect(loggedLines()).toContainEqual(expect.objectContaining({ event: 'payment_intent.key_refused', orderId: 803, refusal: 'other_parameters' }));
    // The orphan's client secret was never handed out.
    expect(answer.client_secret).not.toBe(orphan!.client_secret);
  });
});

const skipRedis = noRedis || noRedisServerBinary;
const redisReason = noRedis ? REDIS_SKIP_REASON : 'redis-server is not installed (set REDIS_SERVER_BIN)';

describe.skipIf(skipRedis)(`two payment-intent calls on two instances with Redis slow${skipRedis ? ` (skipped: ${redisReason})` : ''}`, () => {
  it('wait for Redis instead of falling back: one create, one intent, one client secret', async () => {
    const redis = await startDisposableRedis();
    const prefix = testPrefix('intent-race');
    providers.woo.seed({ id: 804, lines: [{ total: '30.00' }] });
    const [bodyA, bodyB] = await twoBodies(804);
    // Two instances that have been serving requests: each its own connection, memory and locks.
    const instance = async (): Promise<Services> => {
      const connection = redisConnection(redis.url, 300);
      await connection.run('ping', (client) => client.ping());
      resetServices();
      const services = getServices();
      return {
        ...services,
        orderLocks: orderLocksWithFallback(
          new RedisOrderLocks(connection, { prefix, ttlMs: 30_000, waitMs: 20_000 }),
          new MemoryOrderLocks(),
          new FallbackWarning(),
        ),
      };
    };
    const [a, b] = [await instance(), await instance()];

    redis.freeze();
    let calls: Promise<[Awaited<ReturnType<typeof call>>, Awaited<ReturnType<typeof call>>]>;
    try {
      calls = Promise.all([call(bodyA, a), call(bodyB, b)]);
      // Both locks' SETs have timed out, and Redis has answered neither.
      await eventually(async () => loggedLines().filter((line) => line.event === 'redis.lock_answer_late').length === 2);
    } finally {
      redis.thaw();
    }
    const [first, second] = await calls;

    expect(providers.callsTo('card', 'POST', /\/v1\/payment_intents$/)).toHaveLength(1);
    expect(providers.stripe.intents.size).toBe(1);
    expect(second.client_secret).toBe(first.client_secret);
    expect(storedIntentIds(804)).toEqual([first.payment_intent_id]);
    expect(loggedLines().filter((line) => line.event === 'redis.fallback_to_memory')).toEqual([]);
  });
});
