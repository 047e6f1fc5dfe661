/**
 * The cap on concurrent store calls (lib/shared-state/store-slots.ts): the same rules for
 * the in-process semaphore and the one in Redis (the cap, the split between
 * callers, follow-ups first, leases that end by themselves), then what only
 * Redis has (instances sharing one cap, a killed instance's leases, keys in one
 * hash slot, Redis down), then the gate every store call passes. Time is a
 * fake clock given to the semaphores; no test sleeps.
 */
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { defaultReserve, type SlotSplit, type StoreCaller } from '@/lib/config';
import { StoreBusyError } from '@/lib/errors';
import { withStoreCaller } from '@/lib/request-scope';
import { FallbackWarning, withFallback } from '@/lib/shared-state/fallback';
import { StoreGate } from '@/lib/shared-state/store-gate';
import { MemoryStoreSlots, RedisStoreSlots, WAITER_TTL_MS, type StoreSlots } from '@/lib/shared-state/store-slots';
import { MIN_ATTEMPT_MS, withRequestDeadline } from '@/lib/upstream/budget';
import {
  noRedis,
  noRedisServerBinary,
  REDIS_SKIP_REASON,
  REDIS_URL,
  redisConnection,
  startDisposableRedis,
  testPrefix,
} from '../support/redis';
import { loggedLines } from '../support/setup';

const LEASE_MS = 5_000;

function clock(start = 1_700_000_000_000) {
  const state = { now: start };
  return { now: () => state.now, advance: (ms: number) => void (state.now += ms) };
}

const split = (limit: number, reserved: Partial<SlotSplit['reserved']> = {}): SlotSplit => ({
  limit,
  reserved: { checkout: 0, webhook: 0, ...reserved },
});

function take(slots: StoreSlots, caller: StoreCaller, options: { followUp?: boolean; token?: string; leaseMs?: number } = {}) {
  return slots.tryAcquire({
    caller,
    followUp: options.followUp ?? false,
    token: options.token ?? randomUUID(),
    leaseMs: options.leaseMs ?? LEASE_MS,
  });
}

/** Tries `count` times; how many got a slot. */
async function taken(slots: StoreSlots, caller: StoreCaller, count: number): Promise<number> {
  let got = 0;
  for (let i = 0; i < count; i += 1) if (await take(slots, caller)) got += 1;
  return got;
}

type Make = (split: SlotSplit, now: () => number) => StoreSlots;

const implementations: { name: string; skip: boolean; make: Make }[] = [
  { name: 'in process', skip: false, make: (s, now) => new MemoryStoreSlots(s, now) },
  {
    name: `in Redis${noRedis ? ` (skipped: ${REDIS_SKIP_REASON})` : ''}`,
    skip: noRedis,
    make: (s, now) => new RedisStoreSlots(redisConnection(), s, { prefix: testPrefix('store-slots'), now }),
  },
];

for (const implementation of implementations) {
  describe.skipIf(implementation.skip)(`the store's slots, ${implementation.name}`, () => {
    it('lets no more calls than the cap at once, and a slot given back is taken again', async () => {
      const slots = implementation.make(split(3), clock().now);
      const leases = [await take(slots, 'webhook'), await take(slots, 'checkout'), await take(slots, 'background')];
      expect(leases.every(Boolean)).toBe(true);
      expect(await take(slots, 'checkout')).toBeUndefined();
      await leases[0]?.release();
      expect(await take(slots, 'checkout')).toBeDefined();
      expect(await take(slots, 'checkout')).toBeUndefined();
    });

    it('a new webhook or cron request never takes the last slots checkout is guaranteed', async () => {
      const slots = implementation.make({ limit: 4, reserved: defaultReserve(4) }, clock().now);
      expect(defaultReserve(4)).toEqual({ checkout: 2, webhook: 1 });
      expect(await taken(slots, 'webhook', 5)).toBe(2);
      expect(await taken(slots, 'background', 1)).toBe(0);
      expect(await taken(slots, 'checkout', 5)).toBe(2);
    });

    it('checkout never takes the slot the webhooks are guaranteed, and the crons get only unreserved slots', async () => {
      const slots = implementation.make({ limit: 4, reserved: defaultReserve(4) }, clock().now);
      expect(await taken(slots, 'background', 3)).toBe(1);
      expect(await taken(slots, 'checkout', 5)).toBe(2);
      expect(await taken(slots, 'webhook', 5)).toBe(1);
    });

    it('a later call of an admitted request goes first: it ignores the split, and new requests wait while it waits', async () => {
      const slots = implementation.make(split(2, { webhook: 1 }), clock().now);
      const first = await take(slots, 'checkout');
      expect(await take(slots, 'checkout')).toBeUndefined(); // the webhooks' slot
      expect(await take(slots, 'checkout', { followUp: true })).toBeDefined(); // ignores it
      const waiter = randomUUID();
      expect(await take(slots, 'webhook', { followUp: true, token: waiter })).toBeUndefined();
      await first?.release();
      expect(await take(slots, 'webhook')).toBeUndefined(); // the free slot is the waiting follow-up's
      expect(await take(slots, 'webhook', { followUp: true, token: waiter })).toBeDefined();
    });

    it('a waiting follow-up that stops asking (its instance died) holds new requests back only briefly', async () => {
      const time = clock();
      const slots = implementation.make(split(1), time.now);
      const held = await take(slots, 'checkout');
      expect(await take(slots, 'webhook', { followUp: true })).toBeUndefined();
      await held?.release();
      expect(await take(slots, 'checkout')).toBeUndefined();
      time.advance(WAITER_TTL_MS);
      expect(await take(slots, 'checkout')).toBeDefined();
    });

    it('a follow-up that gives up stops holding new requests back at once', async () => {
      const slots = implementation.make(split(1), clock().now);
      const held = await take(slots, 'checkout');
      const waiter = randomUUID();
      expect(await take(slots, 'webhook', { followUp: true, token: waiter })).toBeUndefined();
      await slots.stopWaiting(waiter);
      await held?.release();
      expect(await take(slots, 'checkout')).toBeDefined();
    });

    it('a lease its holder never gives back ends by itself', async () => {
      const time = clock();
      const slots = implementation.make(split(1), time.now);
      expect(await take(slots, 'webhook', { leaseMs: LEASE_MS })).toBeDefined();
      time.advance(LEASE_MS - 1);
      expect(await take(slots, 'webhook')).toBeUndefined();
      time.advance(1);
      expect(await take(slots, 'webhook')).toBeDefined();
    });

    it('a slot handed over stays taken: nobody else gets it in between, and it counts for its new holder', async () => {
      const slots = implementation.make(split(1), clock().now);
      const first = await take(slots, 'webhook');
      const next = { caller: 'checkout' as const, followUp: false, token: randomUUID(), leaseMs: LEASE_MS };
      const second = first?.handOver(next);
      expect(await take(slots, 'webhook')).toBeUndefined();
      await expect.poll(async () => (await slots.usage()).inUse, { timeout: 10_000 }).toEqual({ checkout: 1, webhook: 0, background: 0 });
      await second?.release();
      expect(await take(slots, 'webhook')).toBeDefined();
    });

    it('reports the cap, its split and the slots in use by class', async () => {
      const slots = implementation.make({ limit: 8, reserved: defaultReserve(8) }, clock().now);
      await take(slots, 'checkout');
      await take(slots, 'checkout');
      await take(slots, 'webhook');
      expect(await slots.usage()).toMatchObject({
        limit: 8,
        reserved: { checkout: 4, webhook: 2 },
        inUse: { checkout: 2, webhook: 1, background: 0 },
        waiting: 0,
      });
    });
  });
}

describe.skipIf(noRedis)(`the store's slots shared by instances in Redis${noRedis ? ` (skipped: ${REDIS_SKIP_REASON})` : ''}`, () => {
  /** Each instance with its own connection, as separate processes have. */
  const instances = (count: number, s: SlotSplit, now: () => number) => {
    const prefix = testPrefix('store-slots-shared');
    return Array.from({ length: count }, () => new RedisStoreSlots(redisConnection(), s, { prefix, now }));
  };

  it('one cap for every instance: a slot one gives back is taken by another', async () => {
    const [a, b] = instances(2, split(2), clock().now) as [RedisStoreSlots, RedisStoreSlots];
    const leases = [await take(a, 'checkout'), await take(a, 'checkout')];
    expect(await take(b, 'checkout')).toBeUndefined();
    await leases[1]?.release();
    expect(await take(b, 'checkout')).toBeDefined();
    expect(await take(a, 'checkout')).toBeUndefined();
  });

  it('never more than the cap, however many instances ask at the same moment', async () => {
    const many = instances(4, split(3), clock().now);
    const results = await Promise.all(Array.from({ length: 24 }, (_, i) => take(many[i % many.length] as RedisStoreSlots, 'webhook')));
    expect(results.filter(Boolean)).toHaveLength(3);
  });

  it('an instance killed mid-call keeps its slots only until its leases end', async () => {
    const time = clock();
    const prefix = testPrefix('store-slots-killed');
    const doomedConnection = redisConnection();
    const doomed = new RedisStoreSlots(doomedConnection, split(2), { prefix, now: time.now });
    const survivor = new RedisStoreSlots(redisConnection(), split(2), { prefix, now: time.now });
    expect(await take(doomed, 'checkout', { leaseMs: LEASE_MS })).toBeDefined();
    expect(await take(doomed, 'webhook', { leaseMs: LEASE_MS })).toBeDefined();
    // The process dies with its calls in flight: nothing is given back.
    await doomedConnection.close();
    expect(await take(survivor, 'checkout')).toBeUndefined();
    time.advance(LEASE_MS);
    expect(await taken(survivor, 'checkout', 3)).toBe(2);
  });

  it('keeps its keys in one hash slot, under the key prefix, and lets them expire', async () => {
    const prefix = testPrefix('store-slots-keys');
    const connection = redisConnection();
    const slots = new RedisStoreSlots(connection, split(1), { prefix });
    await take(slots, 'checkout');
    await take(slots, 'checkout', { followUp: true });
    const redis = await connection.client();
    const keys = (await redis.keys(`${prefix}*`)).sort();
    expect(keys).toEqual([`${prefix}{store-slots}:leases`, `${prefix}{store-slots}:waiting`]);
    for (const key of keys) expect(await redis.pTTL(key)).toBeGreaterThan(0);
  });
});

describe.skipIf(noRedis || noRedisServerBinary)('when Redis is down', () => {
  it('each instance keeps the same cap on its own, and says so once', async () => {
    const redis = await startDisposableRedis();
    const connection = redisConnection(redis.url);
    const slots = withFallback<StoreSlots>(
      'store_slots',
      new FallbackWarning(),
      new RedisStoreSlots(connection, split(1), { prefix: testPrefix('store-slots-down') }),
      new MemoryStoreSlots(split(1)),
      ['stopWaiting'],
    );
    expect(await take(slots, 'checkout')).toBeDefined(); // in Redis
    await redis.stop();
    const local = await take(slots, 'checkout');
    expect(local).toBeDefined();
    expect(await take(slots, 'webhook')).toBeUndefined();
    expect(await slots.usage()).toMatchObject({ scope: 'this_instance', inUse: { checkout: 1 } });
    await local?.release();
    expect(await take(slots, 'webhook')).toBeDefined();
    const warnings = loggedLines().filter((line) => line.event === 'redis.fallback_to_memory');
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({ part: 'store_slots' });
  });
});

describe('the gate every store call passes', () => {
  it('a call waits for a slot another call of this instance gives back, then goes', async () => {
    const gate = new StoreGate(new MemoryStoreSlots(split(1)), { firstCallWaitMs: 60_000 });
    const first = await gate.enter('get order', 1_000);
    let second = false;
    const waiting = gate.enter('get order', 1_000).then((slot) => {
      second = true;
      return slot;
    });
    await Promise.resolve();
    expect(second).toBe(false);
    first.leave(false);
    (await waiting).leave(false);
    expect(second).toBe(true);
  });

  it("a slot given back goes to a waiting follow-up first, then to a new request of the giver's class; another class asks again", async () => {
    // Nothing kept between a request's calls here: this is about slots given back.
    const gate = new StoreGate(new MemoryStoreSlots(split(1)), { firstCallWaitMs: 60_000, followUpWaitMs: 60_000, keepForNextCallMs: 0 });
    /** Yields to the event loop until `count` calls wait here: no timer, no sleep. */
    const waitersAre = async (count: number) => {
      while (gate.waiters < count) await new Promise((resolve) => setImmediate(resolve));
    };
    const order: string[] = [];
    let afterFirstCall!: () => void;
    let secondCall!: () => void;
    const firstCallDone = new Promise<void>((resolve) => (afterFirstCall = resolve));
    const goOn = new Promise<void>((resolve) => (secondCall = resolve));
    // A checkout request whose first call went through, and whose second will have to wait.
    const admitted = withStoreCaller('checkout', async () => {
      (await gate.enter('get order', 1_000)).leave(false);
      afterFirstCall();
      await goOn;
      const slot = await gate.enter('update order', 1_000);
      order.push('checkout follow-up');
      slot.leave(false);
    });
    await firstCallDone;
    const holder = await withStoreCaller('webhook', () => gate.enter('get order', 1_000));
    secondCall();
    await waitersAre(1);
    // The webhook has waited longer, but the slots the checkouts give back stay with the checkouts.
    const newWebhook = withStoreCaller('webhook', async () => {
      (await gate.enter('get order', 1_000)).leave(false);
      order.push('new webhook');
    });
    await waitersAre(2);
    const newCheckout = withStoreCaller('checkout', async () => {
      const slot = await gate.enter('get order', 1_000);
      order.push('new checkout');
      slot.leave(false);
    });
    await waitersAre(3);
    holder.leave(false);
    // Handed over at once, without a try through the semaphore: the follow-up no longer waits.
    expect(gate.waiters).toBe(2);
    await Promise.all([admitted, newCheckout, newWebhook]);
    expect(order).toEqual(['checkout follow-up', 'new checkout', 'new webhook']);
  });

  it('a call that gets no slot in its wait is not sent: StoreBusyError, to try again in 1 to 3 seconds', async () => {
    const gate = new StoreGate(new MemoryStoreSlots(split(1)), { firstCallWaitMs: 0 });
    await gate.enter('get order', 1_000);
    const error = await gate.enter('update order', 1_000).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoreBusyError);
    expect(error).toMatchObject({ kind: 'store', failure: 'busy', operation: 'update order', message: 'The shop is busy, try again in a few seconds' });
    expect((error as StoreBusyError).retryAfterSeconds).toBeGreaterThanOrEqual(1);
    expect((error as StoreBusyError).retryAfterSeconds).toBeLessThanOrEqual(3);
  });

  it('never waits into the time the request needs for the call itself', async () => {
    const gate = new StoreGate(new MemoryStoreSlots(split(1)), { firstCallWaitMs: 60_000 });
    await gate.enter('get order', 1_000);
    // A minute's wait would time the test out: the request's deadline leaves none.
    const error = await withRequestDeadline(MIN_ATTEMPT_MS, () => gate.enter('get order', 1_000)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoreBusyError);
  });

  it('a call that timed out keeps its slot until its lease ends: the store may still be working on it', async () => {
    const time = clock();
    const slots = new MemoryStoreSlots(split(1), time.now);
    const gate = new StoreGate(slots, { firstCallWaitMs: 0 });
    (await gate.enter('update order', 1_000)).leave(true);
    expect(await take(slots, 'checkout')).toBeUndefined();
    time.advance(1_000 + 2_000);
    expect(await take(slots, 'checkout')).toBeDefined();
  });

  it("a request's later calls are follow-ups: admitted beyond the split, while a new request is not", async () => {
    const gate = new StoreGate(new MemoryStoreSlots(split(2, { webhook: 1 })), { firstCallWaitMs: 0, followUpWaitMs: 0 });
    await withStoreCaller('checkout', async () => {
      await gate.enter('get order', 1_000); // held: the other slot is the webhooks'
      await expect(withStoreCaller('checkout', () => gate.enter('get order', 1_000))).rejects.toBeInstanceOf(StoreBusyError);
      await expect(gate.enter('update order', 1_000)).resolves.toBeDefined();
    });
  });

  it('the crons never count as follow-ups: a cron unit refused halfway is done again by the next run', async () => {
    const gate = new StoreGate(new MemoryStoreSlots(split(2, { webhook: 1 })), { firstCallWaitMs: 0, followUpWaitMs: 0 });
    await withStoreCaller('background', async () => {
      await gate.enter('get order', 1_000);
      await expect(gate.enter('update order', 1_000)).rejects.toBeInstanceOf(StoreBusyError);
    });
  });

  describe("a request's slot kept for its next call", () => {
    afterEach(() => {
      vi.useRealTimers();
    });

    /** Yields to the event loop until `count` calls wait at `gate`: no timer, no sleep. */
    const waitersAre = async (gate: StoreGate, count: number) => {
      while (gate.waiters < count) await new Promise((resolve) => setImmediate(resolve));
    };

    it('the next call of the request gets the slot at once, ahead of a new request already waiting for it', async () => {
      const slots = new MemoryStoreSlots(split(1));
      const gate = new StoreGate(slots, { firstCallWaitMs: 60_000, followUpWaitMs: 0, keepForNextCallMs: 60_000 });
      const order: string[] = [];
      let firstCallDone!: () => void;
      let goOn!: () => void;
      const afterFirstCall = new Promise<void>((resolve) => (firstCallDone = resolve));
      const secondCall = new Promise<void>((resolve) => (goOn = resolve));
      const admitted = withStoreCaller('checkout', async () => {
        (await gate.enter('get order', 1_000)).leave(false);
        firstCallDone();
        await secondCall;
        // A follow-up that may not wait at all: it goes only on the slot kept for it.
        const slot = await gate.enter('update order', 1_000);
        order.push('admitted, second call');
        slot.leave(false);
      });
      await afterFirstCall;
      const newRequest = withStoreCaller('checkout', async () => {
        const slot = await gate.enter('get order', 1_000);
        order.push('new request');
        slot.leave(false);
      });
      await waitersAre(gate, 1);
      goOn();
      await Promise.all([admitted, newRequest]);
      expect(order).toEqual(['admitted, second call', 'new request']);
    });

    it('the end of the request gives the slot back at once', async () => {
      const slots = new MemoryStoreSlots(split(1));
      const gate = new StoreGate(slots, { keepForNextCallMs: 60_000 });
      let kept!: () => void;
      let end!: () => void;
      const keeping = new Promise<void>((resolve) => (kept = resolve));
      const ending = new Promise<void>((resolve) => (end = resolve));
      const request = withStoreCaller('webhook', async () => {
        (await gate.enter('get order', 1_000)).leave(false);
        kept();
        await ending;
      });
      await keeping;
      expect((await slots.usage()).inUse.webhook).toBe(1);
      end();
      await request;
      expect((await slots.usage()).inUse.webhook).toBe(0);
      expect(await take(slots, 'checkout')).toBeDefined();
    });

    it('a slot not asked for within the wait goes back: to a waiter here, else to the semaphore', async () => {
      vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
      const slots = new MemoryStoreSlots(split(1));
      const gate = new StoreGate(slots, { firstCallWaitMs: 60_000, keepForNextCallMs: 100 });
      let kept!: () => void;
      const keeping = new Promise<void>((resolve) => (kept = resolve));
      const request = withStoreCaller('checkout', async () => {
        (await gate.enter('get order', 1_000)).leave(false);
        kept();
        await new Promise(() => undefined); // a request that never makes its next call, nor ends
      });
      void request;
      await keeping;
      let waiterGot = false;
      const waiter = withStoreCaller('checkout', async () => {
        const slot = await gate.enter('get order', 1_000);
        waiterGot = true;
        return slot;
      });
      await vi.advanceTimersByTimeAsync(99);
      expect(waiterGot).toBe(false);
      await vi.advanceTimersByTimeAsync(1);
      expect(waiterGot).toBe(true);
      (await waiter).leave(false);
      expect((await slots.usage()).inUse.checkout).toBe(0);
    });

    it('never for the crons: a cron unit is a new request', async () => {
      const slots = new MemoryStoreSlots(split(1));
      const gate = new StoreGate(slots, { keepForNextCallMs: 60_000 });
      await withStoreCaller('background', async () => {
        (await gate.enter('get order', 1_000)).leave(false);
        expect((await slots.usage()).inUse.background).toBe(0);
      });
    });

    it('not while a follow-up of another request waits here: it goes first', async () => {
      vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
      const slots = new MemoryStoreSlots(split(1));
      const gate = new StoreGate(slots, { firstCallWaitMs: 0, followUpWaitMs: 60_000, keepForNextCallMs: 100 });
      let firstCallDone!: () => void;
      let goOn!: () => void;
      const afterFirstCall = new Promise<void>((resolve) => (firstCallDone = resolve));
      const secondCall = new Promise<void>((resolve) => (goOn = resolve));
      let secondWent = false;
      const admitted = withStoreCaller('checkout', async () => {
        (await gate.enter('get order', 1_000)).leave(false);
        firstCallDone();
        await secondCall;
        const slot = await gate.enter('update order', 1_000);
        secondWent = true;
        slot.leave(false);
      });
      await afterFirstCall;
      // Its slot kept past the wait goes back to the semaphore; another request takes it.
      await vi.advanceTimersByTimeAsync(100);
      let endOther!: () => void;
      const other = withStoreCaller('checkout', async () => {
        const slot = await gate.enter('get order', 1_000);
        await new Promise<void>((resolve) => (endOther = resolve));
        slot.leave(false);
        // Handed to the waiting follow-up at once, not kept for this request's next call.
        expect(gate.waiters).toBe(0);
      });
      while (!endOther) await vi.advanceTimersByTimeAsync(0);
      goOn();
      await waitersAre(gate, 1);
      endOther();
      await Promise.all([admitted, other]);
      expect(secondWent).toBe(true);
    });

    it('one slot kept per request: of two calls that end together, the second gives its slot back at once', async () => {
      const slots = new MemoryStoreSlots(split(2));
      const gate = new StoreGate(slots, { keepForNextCallMs: 60_000 });
      let bothEnded!: () => void;
      let end!: () => void;
      const ended = new Promise<void>((resolve) => (bothEnded = resolve));
      const ending = new Promise<void>((resolve) => (end = resolve));
      const request = withStoreCaller('checkout', async () => {
        const [first, second] = await Promise.all([gate.enter('get order', 1_000), gate.enter('get customer', 1_000)]);
        first.leave(false);
        second.leave(false);
        bothEnded();
        await ending;
      });
      await ended;
      expect((await slots.usage()).inUse.checkout).toBe(1);
      end();
      await request;
      // The end of the request gives back the one it kept; none is left behind until its lease ends.
      expect((await slots.usage()).inUse.checkout).toBe(0);
    });
  });
});
