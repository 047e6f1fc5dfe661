/**
 * The replay queue and the reconciliation cursor when Redis fails, against a
 * disposable redis-server of this file's own (stopped and restarted here):
 * a shipping update is never lost (kept in this instance's memory, logged at
 * error level with its order id only, handed over to Redis when it answers
 * again), a replay run fails rather than report an empty queue, and the
 * cursor is treated as absent (read) or logged (save, clear).
 */
import { describe, expect, it } from 'vitest';
import { SharedStateUnavailableError } from '@/lib/errors';
import { RECONCILE_CURSOR, RedisCursorStore } from '@/lib/shared-state/cursor';
import { MemoryShippingReplayQueue, RedisShippingReplayQueue, shippingReplayWithFallback } from '@/lib/shared-state/shipping-replay';
import { eventually, noRedis, noRedisServerBinary, REDIS_SKIP_REASON, redisConnection, startDisposableRedis, testPrefix } from '../support/redis';
import { loggedLines } from '../support/setup';

const skip = noRedis || noRedisServerBinary;
const reason = noRedis ? REDIS_SKIP_REASON : 'redis-server is not installed (set REDIS_SERVER_BIN)';

const notice = { orderNumber: '77', trackingNumber: '1ZSECRETTRACK', carrier: 'UPS', shipDate: undefined };
const entry = (nextAttemptAt = 0) => ({
  work: { kind: 'shipment' as const, notice },
  orderId: 77,
  attempts: 1,
  lastFailure: 'store:unavailable',
  firstQueuedAt: 0,
  nextAttemptAt,
});

describe.skipIf(skip)(`replay queue and cursor when Redis fails${skip ? ` (skipped: ${reason})` : ''}`, () => {
  it('an update queued while Redis is down is kept in memory, logged with its order id, and handed over to Redis later', async () => {
    const server = await startDisposableRedis();
    const prefix = testPrefix('replay-outage');
    const shared = new RedisShippingReplayQueue(redisConnection(server.url, 300), { prefix });
    const local = new MemoryShippingReplayQueue();
    const queue = shippingReplayWithFallback(shared, local);
    await server.stop();

    const added = await queue.add(entry());
    expect(await local.counts()).toEqual({ waiting: 1, parked: 0 });
    const kept = loggedLines().filter((line) => line.event === 'shipping.replay_kept_in_memory');
    expect(kept).toEqual([expect.objectContaining({ level: 'error', orderId: 77, kind: 'shipment' })]);
    expect(JSON.stringify(loggedLines())).not.toContain('1ZSECRETTRACK');
    expect(JSON.stringify(loggedLines())).not.toContain('redis://');

    // A replay run while Redis is still down: this instance replays its own entry...
    const taken = await queue.takeDue(1, 1000);
    expect(taken?.id).toBe(added.id);
    await queue.retryLater({ ...taken!, attempts: 2, nextAttemptAt: 2 });
    // ...and then fails on the shared queue, rather than calling it empty.
    await expect(queue.takeDue(1, 1000)).rejects.toBeInstanceOf(SharedStateUnavailableError);
    await expect(queue.counts()).rejects.toBeInstanceOf(SharedStateUnavailableError);

    // Redis is back: the next run hands the entry over, as it was, and takes it from Redis.
    await server.restart();
    const afterOutage = shippingReplayWithFallback(new RedisShippingReplayQueue(redisConnection(server.url, 300), { prefix }), local);
    expect(await afterOutage.takeDue(5, 1000)).toEqual({ ...added, attempts: 2, nextAttemptAt: 1005 });
    expect(await local.counts()).toEqual({ waiting: 0, parked: 0 });
    expect(loggedLines()).toContainEqual(expect.objectContaining({ event: 'shipping.replay_handed_over', entryId: added.id, orderId: 77 }));
    await afterOutage.remove(added.id);
    expect(await afterOutage.counts()).toEqual({ waiting: 0, parked: 0 });
  });

  it('entries kept in memory are handed over by the next update this instance queues once Redis is back, not only by a cron run landing here', async () => {
    const server = await startDisposableRedis();
    const prefix = testPrefix('replay-handover-on-add');
    const local = new MemoryShippingReplayQueue();
    const queue = shippingReplayWithFallback(new RedisShippingReplayQueue(redisConnection(server.url, 300), { prefix }), local);
    await server.stop();
    const kept = await queue.add(entry());
    expect(await local.counts()).toEqual({ waiting: 1, parked: 0 });

    await server.restart();
    const elsewhere = new RedisShippingReplayQueue(redisConnection(server.url, 300), { prefix });
    // This instance's connection finds Redis again (reading the shared queue fails until it does).
    await eventually(() => queue.counts().then(() => true, () => false));
    await queue.add({ ...entry(10), orderId: 78 });

    // Both are in Redis now, where a cron run on any instance finds them; none is left in this memory.
    expect(await local.counts()).toEqual({ waiting: 0, parked: 0 });
    expect(await elsewhere.counts()).toEqual({ waiting: 2, parked: 0 });
    // As it was kept: its id, and due before the one queued after the outage.
    expect((await elsewhere.takeDue(1, 1000))?.id).toBe(kept.id);
  });

  it('the cursor: unreadable means none (a pass from the newest event), a failed save or clear is logged, not thrown', async () => {
    const server = await startDisposableRedis();
    const cursor = new RedisCursorStore(redisConnection(server.url, 300), RECONCILE_CURSOR, testPrefix('cursor-outage'));
    await cursor.save({ startingAfter: 'evt_saved', savedAt: 1 }, 60_000);
    expect(await cursor.load()).toEqual({ startingAfter: 'evt_saved', savedAt: 1 });
    await server.stop();

    expect(await cursor.load()).toBeUndefined();
    await cursor.save({ startingAfter: 'evt_lost', savedAt: 2 }, 60_000);
    await cursor.clear();
    const events = loggedLines().map((line) => [line.event, line.level]);
    expect(events).toContainEqual(['reconcile.cursor_unreadable', 'warn']);
    expect(events).toContainEqual(['reconcile.cursor_not_saved', 'error']);
    expect(events).toContainEqual(['reconcile.cursor_not_cleared', 'warn']);
  });
});
