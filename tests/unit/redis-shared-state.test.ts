/**
 * The shared state against a real Redis (REDIS_URL): each "instance" is a
 * connection of its own, as two service instances would have, and every test
 * keeps its keys under a prefix of its own.
 */
import { describe, expect, it } from 'vitest';
import { OrderBusyError } from '@/lib/errors';
import { getRedisConnection, RedisConnection } from '@/lib/redis/connection';
import { orderLockTtlMs, RedisOrderLocks } from '@/lib/shared-state/order-locks';
import { RedisProcessedEvents } from '@/lib/shared-state/processed-events';
import { RedisRateLimiter } from '@/lib/shared-state/request-redis';
import { RedisShipStationRateBudget } from '@/lib/shared-state/shipstation-budget';
import { RedisShippedStatus } from '@/lib/shared-state/shipped-status';
import { PROCESSED_EVENT_TTL_MS } from '@/lib/shared-state/processed-events';
import { MemoryRateLimiter, type RateLimitRule } from '@/lib/shared-state/rate-limit';
import { withRequestDeadline } from '@/lib/upstream/budget';
import { applyEventOnce } from '@/lib/card-payments/apply-event';
import { noRedis, observedConnection, REDIS_SKIP_REASON, REDIS_URL, redisConnection, testPrefix } from '../support/redis';

const RULE: RateLimitRule = { name: 'payment-intent', limit: 10, windowMs: 60_000 };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Two service instances: their own connections, one Redis, one key prefix. */
function twoInstances(name: string) {
  const prefix = testPrefix(name);
  return { prefix, a: redisConnection(), b: redisConnection() };
}

describe.skipIf(noRedis)(`rate limits shared by every instance${noRedis ? ` (skipped: ${REDIS_SKIP_REASON})` : ''}`, () => {
  it('two instances count one window: the 11th request from one client, wherever it lands, is refused', async () => {
    const { prefix, a, b } = twoInstances('limiter-shared');
    const now = () => 1_800_000_030_000;
    const instances = [new RedisRateLimiter(a, { prefix, now }), new RedisRateLimiter(b, { prefix, now })];
    const decisions = [];
    for (let i = 0; i < 11; i += 1) decisions.push(await instances[i % 2]!.hit(RULE, '203.0.113.7'));
    expect(decisions.slice(0, 10).every((d) => d.allowed)).toBe(true);
    expect(decisions[10]).toEqual({ allowed: false, limit: 10, remaining: 0, resetAt: 1_800_000_060_000 });
    // Another client and another endpoint have counters of their own.
    expect((await instances[0]!.hit(RULE, '203.0.113.8')).allowed).toBe(true);
    expect((await instances[1]!.hit({ ...RULE, name: 'submit-order' }, '203.0.113.7')).allowed).toBe(true);
  });

  it('answers exactly as the in-process limiter does, window by window', async () => {
    const { prefix, a } = twoInstances('limiter-same-answers');
    let time = 1_800_000_000_000;
    const now = () => time;
    const shared = new RedisRateLimiter(a, { prefix, now });
    const memory = new MemoryRateLimiter({ now });
    const rule = { name: 'x', limit: 3, windowMs: 1000 };
    for (const step of [0, 100, 200, 300, 700, 1, 5000, 10]) {
      time += step;
      expect(await shared.hit(rule, 'c')).toEqual(await memory.hit(rule, 'c'));
    }
  });

  it("a window's counter expires when the window ends", async () => {
    const { prefix, a } = twoInstances('limiter-expiry');
    const limiter = new RedisRateLimiter(a, { prefix });
    await limiter.hit(RULE, '198.51.100.1');
    const redis = await a.client();
    const [key] = await redis.keys(`${prefix}*`);
    expect(key).toContain('payment-intent');
    expect(key).toContain('198.51.100.1');
    const ttl = await redis.pTTL(key!);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(60_000 + 5_000);
  });
});

describe.skipIf(noRedis)('per-order locks shared by every instance', () => {
  it('a lock held on one instance keeps another out until its holder releases it', async () => {
    const { prefix, a, b } = twoInstances('lock-blocks');
    const observedB = observedConnection();
    const onA = new RedisOrderLocks(a, { prefix, ttlMs: 10_000 });
    const onB = new RedisOrderLocks(observedB, { prefix, ttlMs: 10_000, waitMs: 300 });
    const order: string[] = [];
    let release!: () => void;
    let aHolds!: () => void;
    const holding = new Promise<void>((resolve) => (aHolds = resolve));
    const held = onA.withOrderLock(7, async () => {
      order.push('a:start');
      aHolds();
      await new Promise<void>((resolve) => {
        release = resolve;
      });
      order.push('a:end');
    });
    await holding;
    // B gives up after its wait: A still holds the order.
    await expect(onB.withOrderLock(7, async () => order.push('b:never'))).rejects.toBeInstanceOf(OrderBusyError);
    // Another order is free.
    await expect(onB.withOrderLock(8, async () => 'other order')).resolves.toBe('other order');

    const patientB = new RedisOrderLocks(observedB, { prefix, ttlMs: 10_000, waitMs: 5_000 });
    const bRefused = observedB.answered('lock_acquire');
    const waiting = patientB.withOrderLock(7, async () => {
      order.push('b');
    });
    // B's first SET NX has found the order held: B is waiting when A lets go.
    await bRefused;
    release();
    await Promise.all([held, waiting]);
    expect(order).toEqual(['a:start', 'a:end', 'b']);
    expect(await (await a.client()).exists(`${prefix}{gate}:lock:order:7`)).toBe(0);
  });

  it('is released by its owner only: a holder whose lock expired cannot free its successor', async () => {
    const { prefix, a, b } = twoInstances('lock-owner');
    const slowA = new RedisOrderLocks(a, { prefix, ttlMs: 200 });
    const onB = new RedisOrderLocks(b, { prefix, ttlMs: 10_000, waitMs: 3_000 });
    const third = new RedisOrderLocks(b, { prefix, ttlMs: 10_000, waitMs: 100 });
    let releaseA!: () => void;
    let aHolds!: () => void;
    const aHolding = new Promise<void>((resolve) => (aHolds = resolve));
    let bEnters!: () => void;
    const bEntered = new Promise<void>((resolve) => (bEnters = resolve));
    let releaseB!: () => void;
    // A outlives its TTL (it works until the test lets it go); B gets in once A's lock expires, and is
    // still working when A finishes.
    const aDone = slowA.withOrderLock(9, async () => {
      aHolds();
      await new Promise<void>((resolve) => (releaseA = resolve));
    });
    await aHolding;
    const bDone = onB.withOrderLock(9, async () => {
      bEnters();
      await new Promise<void>((resolve) => {
        releaseB = resolve;
      });
    });
    await bEntered;
    releaseA();
    await aDone;
    // A's release did not delete B's lock: a third writer is still kept out.
    await expect(third.withOrderLock(9, async () => 'never')).rejects.toBeInstanceOf(OrderBusyError);
    releaseB();
    await bDone;
    await expect(third.withOrderLock(9, async () => 'now')).resolves.toBe('now');
  });

  it("lives as long as its holder can: the request's deadline (3 × UPSTREAM_TIMEOUT_MS) plus a margin", async () => {
    expect(orderLockTtlMs(10_000)).toBe(35_000);
    expect(orderLockTtlMs(2_000)).toBe(11_000);
    const { prefix, a } = twoInstances('lock-ttl');
    const locks = new RedisOrderLocks(a, { prefix, ttlMs: orderLockTtlMs(10_000) });
    const ttl = await locks.withOrderLock(11, async () => (await a.client()).pTTL(`${prefix}{gate}:lock:order:11`));
    expect(ttl).toBeGreaterThan(30_000);
    expect(ttl).toBeLessThanOrEqual(35_000);
  });

  it("waits only while its request's deadline leaves the reserve for the work, then answers busy", async () => {
    const { prefix, a, b } = twoInstances('lock-wait-deadline');
    const holder = new RedisOrderLocks(a, { prefix, ttlMs: 10_000 });
    // A long wait allowed, but the request has 3 s left, 2.7 s of them kept for its work: 0.3 s to wait.
    const waiter = new RedisOrderLocks(b, { prefix, ttlMs: 10_000, waitMs: 20_000, reserveMs: 2_700 });
    let release!: () => void;
    let holds!: () => void;
    const holding = new Promise<void>((resolve) => (holds = resolve));
    const held = holder.withOrderLock(15, () => {
      holds();
      return new Promise<void>((resolve) => (release = resolve));
    });
    await holding;
    let ran = false;
    const started = Date.now();
    const outcome = await withRequestDeadline(3_000, () =>
      waiter.withOrderLock(15, async () => {
        ran = true;
      }),
    ).catch((error: unknown) => error);
    const waited = Date.now() - started;
    release();
    await held;
    expect(outcome).toBeInstanceOf(OrderBusyError);
    expect(ran).toBe(false);
    // Busy before the request's deadline (2.7 s of slack for a busy machine), not after the 20 s wait.
    expect(waited).toBeLessThan(3_000);
    // A free order is taken even with no time left to wait.
    await expect(withRequestDeadline(500, () => waiter.withOrderLock(15, async () => 'taken'))).resolves.toBe('taken');
  });
});

describe.skipIf(noRedis)('processed events shared by every instance', () => {
  it('an event applied on instance A is answered on instance B without effect', async () => {
    const { prefix, a, b } = twoInstances('events');
    const instanceA = { cardEventLocks: new RedisOrderLocks(a, { prefix, ttlMs: 10_000 }), processedEvents: new RedisProcessedEvents(a, { prefix }) };
    const instanceB = { cardEventLocks: new RedisOrderLocks(b, { prefix, ttlMs: 10_000 }), processedEvents: new RedisProcessedEvents(b, { prefix }) };
    let applied = 0;
    const apply = async () => {
      applied += 1;
      return 'paid' as const;
    };
    expect(await applyEventOnce(instanceA, 21, 'evt_shared', apply)).toBe('paid');
    expect(await applyEventOnce(instanceB, 21, 'evt_shared', apply)).toBe('duplicate_event');
    expect(applied).toBe(1);
  });

  it('one event delivered to both instances at the same moment is applied once', async () => {
    const { prefix, a, b } = twoInstances('events-concurrent');
    const make = (connection: RedisConnection) => ({
      cardEventLocks: new RedisOrderLocks(connection, { prefix, ttlMs: 10_000 }),
      processedEvents: new RedisProcessedEvents(connection, { prefix }),
    });
    let applied = 0;
    const apply = async () => {
      applied += 1;
      await sleep(50);
      return 'paid' as const;
    };
    const outcomes = await Promise.all([make(a), make(b), make(a), make(b)].map((s) => applyEventOnce(s, 22, 'evt_twice', apply)));
    expect(applied).toBe(1);
    expect(outcomes.filter((o) => o === 'paid')).toHaveLength(1);
  });

  it('remembers an event for 7 days, and only once its effects are written', async () => {
    const { prefix, a } = twoInstances('events-ttl');
    const services = { cardEventLocks: new RedisOrderLocks(a, { prefix, ttlMs: 10_000 }), processedEvents: new RedisProcessedEvents(a, { prefix }) };
    await expect(applyEventOnce(services, 23, 'evt_fails', async () => Promise.reject(new Error('store down')))).rejects.toThrow('store down');
    expect(await services.processedEvents.has('cardprovider:evt_fails')).toBe(false);
    expect(await applyEventOnce(services, 23, 'evt_fails', async () => 'paid')).toBe('paid');
    const ttl = await (await a.client()).pTTL(`${prefix}{gate}:event:cardprovider:evt_fails`);
    expect(PROCESSED_EVENT_TTL_MS).toBe(7 * 24 * 60 * 60 * 1000);
    expect(ttl).toBeGreaterThan(PROCESSED_EVENT_TTL_MS - 60_000);
  });
});

describe.skipIf(noRedis)('the shipping memories shared by every instance', () => {
  it('a store found without the shipped status on one instance is known to every other, for the TTL', async () => {
    const { prefix, a, b } = twoInstances('shipped-status');
    const onA = new RedisShippedStatus(a, { prefix, ttlMs: 300 });
    const onB = new RedisShippedStatus(b, { prefix, ttlMs: 300 });
    expect(await onB.statusToWrite()).toBe('shipped');
    await onA.rememberShippedMissing();
    expect(await onB.statusToWrite()).toBe('completed');
    await sleep(400);
    expect(await onB.statusToWrite()).toBe('shipped');
  });

  it("one ShipStation account's 40 requests a minute are shared by every instance", async () => {
    const { prefix, a, b } = twoInstances('budget');
    let time = 1_800_000_000_000;
    const now = () => time;
    const onA = new RedisShipStationRateBudget(a, 'api-key-1', { prefix, now });
    const onB = new RedisShipStationRateBudget(b, 'api-key-1', { prefix, now });
    const otherAccount = new RedisShipStationRateBudget(b, 'api-key-2', { prefix, now });
    for (let i = 0; i < 40; i += 1) expect(await (i % 2 ? onA : onB).reserve()).toBe(0);
    time += 15_000;
    expect(await onA.reserve()).toBe(45_000);
    expect(await otherAccount.reserve()).toBe(0);
    // A response's headers correct the shared figure; a 429 stops both.
    time += 45_000;
    await onA.observe(new Headers({ 'X-Rate-Limit-Limit': '40', 'X-Rate-Limit-Remaining': '1', 'X-Rate-Limit-Reset': '30' }));
    expect(await onB.reserve()).toBe(0);
    expect(await onA.reserve()).toBe(30_000);
    await onB.throttled(new Headers({ 'Retry-After': '5' }));
    expect(await onA.reserve()).toBe(5_000);
    // The account's key is a digest, never the API key.
    const keys = await (await a.client()).keys(`${prefix}*`);
    expect(keys.join(' ')).not.toContain('api-key');
  });
});

describe.skipIf(noRedis)('the shared client', () => {
  it('is one lazily connected client per process, handed to other modules by getRedisConnection', async () => {
    const config = { redisUrl: REDIS_URL, redisTimeoutMs: 500 };
    const first = await getRedisConnection(config)!.client();
    expect(await getRedisConnection(config)!.client()).toBe(first);
    expect(await first.ping()).toBe('PONG');
    expect(getRedisConnection({ redisUrl: undefined, redisTimeoutMs: 500 })).toBeUndefined();
    const { closeRedisConnection } = await import('@/lib/redis/connection');
    await closeRedisConnection();
  });

  it('serves every request that arrives while it is still connecting (a cold instance under load)', async () => {
    const connection = redisConnection();
    const answers = await Promise.all(Array.from({ length: 8 }, () => connection.run('ping', (redis) => redis.ping())));
    expect(answers).toEqual(Array(8).fill('PONG'));
  });
});
