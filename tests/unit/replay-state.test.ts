/**
 * The shared state of the cron routes: the replay queue's leases and delays,
 * and the reconciliation cursor's expiry, in process memory and in a real
 * Redis (skipped, with the reason, when REDIS_URL is unset). Both queues pass
 * the same behavioural tests.
 */
import { describe, expect, it } from 'vitest';
import { MemoryCursorStore, RECONCILE_CURSOR, RedisCursorStore } from '@/lib/shared-state/cursor';
import {
  MAX_REPLAY_ATTEMPTS,
  MemoryShippingReplayQueue,
  nextAttemptDelayMs,
  RedisShippingReplayQueue,
  type ReplayEntry,
  type ShippingReplayQueue,
} from '@/lib/shared-state/shipping-replay';
import { noRedis, REDIS_SKIP_REASON, redisConnection, testPrefix } from '../support/redis';

const notice = { orderNumber: '7', trackingNumber: 'T', carrier: 'UPS', shipDate: undefined };
const entry = (nextAttemptAt: number, orderId = 7) => ({
  work: { kind: 'shipment' as const, notice },
  orderId,
  attempts: 1,
  lastFailure: 'store:unavailable',
  firstQueuedAt: 0,
  nextAttemptAt,
});

const redisSuffix = noRedis ? ` (skipped: ${REDIS_SKIP_REASON})` : '';

/** A Redis queue as one service instance has it: its own connection, one key prefix per test. */
const redisQueue = (prefix = testPrefix('replay')) => new RedisShippingReplayQueue(redisConnection(), { prefix });

const queues: Array<{ name: string; skip: boolean; create: () => ShippingReplayQueue }> = [
  { name: 'in process', skip: false, create: () => new MemoryShippingReplayQueue() },
  { name: `in Redis${redisSuffix}`, skip: noRedis, create: () => redisQueue() },
];

describe.each(queues)('shipping replay queue ($name)', ({ skip, create }) => {
  it.skipIf(skip)('hands out the entry due longest ago, leased so an overlapping run does not take it too', async () => {
    const queue = create();
    const later = await queue.add(entry(200));
    const first = await queue.add(entry(100));
    await queue.add(entry(1_000_000));

    const taken = await queue.takeDue(1000, 300_000);
    expect(taken).toEqual({ ...first, nextAttemptAt: 301_000 });
    expect((await queue.takeDue(2000, 300_000))?.id).toBe(later.id);
    expect(await queue.takeDue(2000, 300_000)).toBeUndefined();
    // A run that died without settling them: taken again once its lease is over, not before.
    expect((await queue.takeDue(301_500, 300_000))?.id).toBe(first.id);
    expect(await queue.takeDue(301_500, 300_000)).toBeUndefined();
    expect(await queue.counts()).toEqual({ waiting: 3, parked: 0 });
  });

  it.skipIf(skip)('stores a failed attempt as given, and hands it out again when it is due', async () => {
    const queue = create();
    const added = await queue.add(entry(0));
    const taken = (await queue.takeDue(10, 1000))!;
    await queue.retryLater({ ...taken, attempts: 2, lastFailure: 'store:timeout', nextAttemptAt: 5000 });
    expect(await queue.takeDue(4999, 1000)).toBeUndefined();
    expect(await queue.takeDue(5000, 1000)).toEqual({ ...added, attempts: 2, lastFailure: 'store:timeout', nextAttemptAt: 6000 });
  });

  it.skipIf(skip)('keeps parked entries apart, and removes settled ones', async () => {
    const queue = create();
    const a = await queue.add(entry(0));
    const b = await queue.add(entry(0));
    await queue.park({ ...a, attempts: MAX_REPLAY_ATTEMPTS });
    await queue.remove(b.id);
    expect(await queue.counts()).toEqual({ waiting: 0, parked: 1 });
    expect(await queue.parked()).toEqual([{ ...a, attempts: MAX_REPLAY_ATTEMPTS }]);
    expect(await queue.takeDue(Number.MAX_SAFE_INTEGER, 1)).toBeUndefined();
  });
});

describe('shipping replay queue', () => {
  it('tries again at the next run, then after 5 minutes doubling up to 6 hours', () => {
    const minutes = Array.from({ length: MAX_REPLAY_ATTEMPTS - 1 }, (_, i) => nextAttemptDelayMs(i + 1) / 60_000);
    expect(minutes).toEqual([0, 5, 10, 20, 40, 80, 160, 320, 360]);
  });
});

describe.skipIf(noRedis)(`shipping replay queue shared by every instance${redisSuffix}`, () => {
  it('two instances taking due entries at the same moment never take the same one', async () => {
    const prefix = testPrefix('replay-lease');
    const a = redisQueue(prefix);
    const b = redisQueue(prefix);
    const added: ReplayEntry[] = [];
    for (let i = 0; i < 20; i += 1) added.push(await a.add(entry(i, 100 + i)));

    const takeAll = async (queue: ShippingReplayQueue) => {
      const ids: string[] = [];
      for (;;) {
        const taken = await queue.takeDue(1000, 300_000);
        if (!taken) return ids;
        ids.push(taken.id);
      }
    };
    const [byA, byB] = await Promise.all([takeAll(a), takeAll(b)]);
    expect(byA.filter((id) => byB.includes(id))).toEqual([]);
    expect([...byA, ...byB].sort()).toEqual(added.map((e) => e.id).sort());
  });

  it('an entry outlives the instance that queued it: a new instance (a fresh connection) replays it', async () => {
    const prefix = testPrefix('replay-durable');
    const webhookInstance = redisConnection();
    const added = await new RedisShippingReplayQueue(webhookInstance, { prefix }).add(entry(0, 42));
    const parkedOne = await new RedisShippingReplayQueue(webhookInstance, { prefix }).add(entry(0, 43));
    await new RedisShippingReplayQueue(webhookInstance, { prefix }).park({ ...parkedOne, attempts: MAX_REPLAY_ATTEMPTS });
    await webhookInstance.close();

    const cronInstance = redisQueue(prefix);
    expect(await cronInstance.counts()).toEqual({ waiting: 1, parked: 1 });
    expect(await cronInstance.takeDue(1, 1000)).toEqual({ ...added, nextAttemptAt: 1001 });
    expect(await cronInstance.parked()).toEqual([expect.objectContaining({ id: parkedOne.id, orderId: 43, attempts: MAX_REPLAY_ATTEMPTS })]);
  });

  it('lists parked entries oldest first', async () => {
    const queue = redisQueue();
    const ids: string[] = [];
    for (const firstQueuedAt of [30, 10, 20]) {
      const added = await queue.add({ ...entry(0), firstQueuedAt });
      await queue.park(added);
      ids.push(added.id);
    }
    expect((await queue.parked()).map((e) => e.firstQueuedAt)).toEqual([10, 20, 30]);
  });
});


describe('reconciliation cursor (in process)', () => {
  it('is kept until cleared or until its time to live is over', async () => {
    let now = 0;
    const store = new MemoryCursorStore(() => now);
    await store.save({ startingAfter: 'evt_1', savedAt: 0 }, 1000);
    expect(await store.load()).toEqual({ startingAfter: 'evt_1', savedAt: 0 });
    now = 1000;
    expect(await store.load()).toBeUndefined();
    await store.save({ startingAfter: 'evt_2', savedAt: now }, 1000);
    await store.clear();
    expect(await store.load()).toBeUndefined();
  });
});

describe.skipIf(noRedis)(`reconciliation cursor in Redis${redisSuffix}`, () => {
  it('round-trips, is shared with a new instance, and is forgotten when cleared', async () => {
    const prefix = testPrefix('cursor');
    const store = new RedisCursorStore(redisConnection(), RECONCILE_CURSOR, prefix);
    expect(await store.load()).toBeUndefined();
    await store.save({ startingAfter: 'evt_1', savedAt: 123 }, 60_000);
    expect(await new RedisCursorStore(redisConnection(), RECONCILE_CURSOR, prefix).load()).toEqual({ startingAfter: 'evt_1', savedAt: 123 });
    await store.clear();
    expect(await store.load()).toBeUndefined();
  });

  it('expires after its time to live', async () => {
    const store = new RedisCursorStore(redisConnection(), RECONCILE_CURSOR, testPrefix('cursor-ttl'));
    // A second to live, so a busy machine still reads it back before it expires.
    await store.save({ startingAfter: 'evt_2', savedAt: 0 }, 1_000);
    expect(await store.load()).toEqual({ startingAfter: 'evt_2', savedAt: 0 });
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    expect(await store.load()).toBeUndefined();
  });
});
