/**
 * The entry and leave scripts (lib/shared-state/request-redis.ts) against a real Redis: the
 * request's rate-limit hit, the event check and the lock in one round trip,
 * the remembering and the release in another, and each script's keys in one
 * hash slot.
 */
import { describe, expect, it } from 'vitest';
import { RateLimitedError } from '@/lib/errors';
import { countCheckLock, rememberUnlock } from '@/lib/shared-state/request-redis';
import { RedisOrderLocks } from '@/lib/shared-state/order-locks';
import { RedisProcessedEvents } from '@/lib/shared-state/processed-events';
import { RedisShippedStatus } from '@/lib/shared-state/shipped-status';
import { countRateLimitHitNow, inRequestScope, requestScopeOf } from '@/lib/request-scope';
import { DeferredRateLimitHit, MemoryRateLimiter, type RateLimitRule } from '@/lib/shared-state/rate-limit';
import { noRedis, REDIS_SKIP_REASON, redisConnection, testPrefix } from '../support/redis';

const RULE: RateLimitRule = { name: 'payment-intent', limit: 2, windowMs: 60_000 };

/** The part of a key Redis Cluster hashes: the first non-empty `{...}`, else the whole key. */
function hashedPart(key: string): string {
  const open = key.indexOf('{');
  const close = open === -1 ? -1 : key.indexOf('}', open + 1);
  return close > open + 1 ? key.slice(open + 1, close) : key;
}

describe('the gate scripts keep their keys in one hash slot', () => {
  it('rate counter, event and lock of one entry, and lock and event of one leave, hash alike, whatever the prefix', () => {
    const claimed = { rule: RULE, client: '203.0.113.9', counted: () => undefined, countLocally: async () => undefined };
    for (const prefix of ['checkout:', 'shop-a:', 'x']) {
      const entry = countCheckLock(prefix, { hit: claimed, eventKey: 'cardprovider:evt_1', lock: { orderId: 42, token: 't', ttlMs: 1000 } });
      const leave = rememberUnlock(prefix, 42, 't', { eventKey: 'cardprovider:evt_1', ttlMs: 1000 });
      expect(entry.keys).toHaveLength(3);
      expect(leave.keys).toHaveLength(2);
      expect(new Set([...entry.keys, ...leave.keys].map(hashedPart))).toEqual(new Set(['gate']));
      // The shipping webhook's entry also reads the store's `shipped` status memory.
      const peekKey = new RedisShippedStatus(redisConnection('redis://127.0.0.1:1'), { prefix }).reading().peek?.key;
      const shipping = countCheckLock(prefix, { hit: claimed, lock: { orderId: 42, token: 't', ttlMs: 1000, peekKey } });
      expect(shipping.keys).toHaveLength(3);
      expect(new Set(shipping.keys.map(hashedPart))).toEqual(new Set(['gate']));
    }
  });
});

/** One request's scope with its hit noted, as the route wrapper leaves it, counted in this instance's memory if Redis fails. */
function inRequest<T>(client: string, run: () => Promise<T>): Promise<T> {
  const local = new MemoryRateLimiter();
  const scope = requestScopeOf({});
  scope.notes.rateLimitHit = new DeferredRateLimitHit(
    RULE,
    client,
    () => local.hit(RULE, client),
    () => local.hit(RULE, client),
  );
  return inRequestScope(scope, run);
}

describe.skipIf(noRedis)(`the entry and leave scripts${noRedis ? ` (skipped: ${REDIS_SKIP_REASON})` : ''}`, () => {
  it('over the limit the entry takes no lock and runs nothing; the hit counted by the lock is not counted again', async () => {
    const prefix = testPrefix('gate-limit');
    const connection = redisConnection();
    const locks = new RedisOrderLocks(connection, { prefix, ttlMs: 10_000 });
    const client = '203.0.113.20';
    let runs = 0;
    for (let i = 0; i < 2; i += 1) {
      await inRequest(client, async () => {
        await locks.withOrderLock(50, async () => {
          runs += 1;
        });
        // The wrapper's settle on the way out: counted already by the entry, no second hit.
        await countRateLimitHitNow();
      });
    }
    const third = inRequest(client, () => locks.withOrderLock(50, async () => void (runs += 1)));
    await expect(third).rejects.toBeInstanceOf(RateLimitedError);
    expect(runs).toBe(2);
    const redis = await connection.client();
    expect(await redis.exists(`${prefix}{gate}:lock:order:50`)).toBe(0);
    const [counter] = await redis.keys(`${prefix}{gate}:ratelimit:payment-intent:*:${client}`);
    expect(await redis.get(counter!)).toBe('3');
  });

  it('two instances racing one event: the second waits, finds it remembered with the release, and takes no lock', async () => {
    const prefix = testPrefix('gate-race');
    const a = new RedisOrderLocks(redisConnection(), { prefix, ttlMs: 10_000 });
    const b = new RedisOrderLocks(redisConnection(), { prefix, ttlMs: 10_000 });
    const events = new RedisProcessedEvents(redisConnection(), { prefix });
    const key = 'cardprovider:evt_race';
    let release!: () => void;
    let started!: () => void;
    const aStarted = new Promise<void>((resolve) => (started = resolve));
    const onA = a.withEventLock(60, key, async () => {
      started();
      await new Promise<void>((resolve) => (release = resolve));
      // Not remembered while the effects are being written.
      expect(await events.has(key)).toBe(false);
      return { result: 'applied', remember: true };
    });
    await aStarted;
    let bRan = false;
    const onB = b.withEventLock(60, key, async () => {
      bRan = true;
      return { result: 'applied', remember: true };
    });
    release();
    expect(await onA).toEqual({ duplicate: false, result: 'applied' });
    expect(await onB).toEqual({ duplicate: true });
    expect(bRan).toBe(false);
    expect(await events.has(key)).toBe(true);
    const redis = await redisConnection().client();
    expect(await redis.exists(`${prefix}{gate}:lock:order:60`)).toBe(0);
  });

  it('an event whose effects failed, or that asks not to be, is not remembered, and the lock is released', async () => {
    const prefix = testPrefix('gate-unremembered');
    const locks = new RedisOrderLocks(redisConnection(), { prefix, ttlMs: 10_000 });
    const events = new RedisProcessedEvents(redisConnection(), { prefix });
    await expect(locks.withEventLock(61, 'cardprovider:evt_fail', async () => Promise.reject(new Error('store refused')))).rejects.toThrow('store refused');
    expect(await events.has('cardprovider:evt_fail')).toBe(false);
    expect(await locks.withEventLock(61, 'cardprovider:evt_skip', async () => ({ result: 'unverifiable', remember: false }))).toEqual({
      duplicate: false,
      result: 'unverifiable',
    });
    expect(await events.has('cardprovider:evt_skip')).toBe(false);
    const redis = await redisConnection().client();
    expect(await redis.exists(`${prefix}{gate}:lock:order:61`)).toBe(0);
  });

  it("the lock's peek reads the store's `shipped` status memory of every instance in the entry, once the lock is taken", async () => {
    const prefix = testPrefix('gate-peek');
    const a = redisConnection();
    const b = redisConnection();
    const locks = new RedisOrderLocks(b, { prefix, ttlMs: 10_000 });
    const statusOnB = new RedisShippedStatus(b, { prefix });
    const statusOf = async () => {
      const reading = statusOnB.reading();
      let found: string | undefined;
      await locks.withOrderLock(62, async () => void (found = await reading.statusToWrite()), reading.peek);
      return found;
    };
    expect(await statusOf()).toBe('shipped');
    await new RedisShippedStatus(a, { prefix }).rememberShippedMissing();
    expect(await statusOf()).toBe('completed');

    // A lock that is not taken reads nothing: the waiter learns the memory with the lock it finally takes.
    const held = countCheckLock(prefix, { lock: { orderId: 63, token: 'other', ttlMs: 10_000 } });
    const redis = await a.client();
    held.read(await held.send(redis));
    const blocked = countCheckLock(prefix, { lock: { orderId: 63, token: 'mine', ttlMs: 10_000, peekKey: statusOnB.reading().peek?.key } });
    expect(blocked.read(await blocked.send(redis))).toEqual({ remembered: false, locked: false, peeked: false });
  });
});
