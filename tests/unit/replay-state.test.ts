/** The in-process shared state of the cron routes: the replay queue's leases and delays, and the reconciliation cursor's expiry. */
import { describe, expect, it } from 'vitest';
import { MemoryReconcileCursorStore } from '@/lib/cron/reconcile-cursor';
import { MAX_REPLAY_ATTEMPTS, MemoryShippingReplayQueue, nextAttemptDelayMs } from '@/lib/webhooks/shipping/replay-queue';

const notice = { orderNumber: '7', trackingNumber: 'T', carrier: 'UPS', shipDate: undefined };
const entry = (nextAttemptAt: number) => ({
  work: { kind: 'shipment' as const, notice },
  orderId: 7,
  attempts: 1,
  lastFailure: 'store:unavailable',
  firstQueuedAt: 0,
  nextAttemptAt,
});

describe('shipping replay queue (in process)', () => {
  it('hands out the entry due longest ago, leased so an overlapping run does not take it too', async () => {
    const queue = new MemoryShippingReplayQueue();
    const later = await queue.add(entry(200));
    const first = await queue.add(entry(100));
    await queue.add(entry(1_000_000));

    expect((await queue.takeDue(1000, 300_000))?.id).toBe(first.id);
    expect((await queue.takeDue(2000, 300_000))?.id).toBe(later.id);
    expect(await queue.takeDue(2000, 300_000)).toBeUndefined();
    // A run that died without settling them: taken again once its lease is over, not before.
    expect((await queue.takeDue(301_500, 300_000))?.id).toBe(first.id);
    expect(await queue.takeDue(301_500, 300_000)).toBeUndefined();
    expect(await queue.counts()).toEqual({ waiting: 3, parked: 0 });
  });

  it('keeps parked entries apart, and removes settled ones', async () => {
    const queue = new MemoryShippingReplayQueue();
    const a = await queue.add(entry(0));
    const b = await queue.add(entry(0));
    await queue.park({ ...a, attempts: MAX_REPLAY_ATTEMPTS });
    await queue.remove(b.id);
    expect(await queue.counts()).toEqual({ waiting: 0, parked: 1 });
    expect(await queue.parked()).toEqual([expect.objectContaining({ id: a.id, attempts: MAX_REPLAY_ATTEMPTS })]);
    expect(await queue.takeDue(Number.MAX_SAFE_INTEGER, 1)).toBeUndefined();
  });

  it('tries again at the next run, then after 5 minutes doubling up to 6 hours', () => {
    const minutes = Array.from({ length: MAX_REPLAY_ATTEMPTS - 1 }, (_, i) => nextAttemptDelayMs(i + 1) / 60_000);
    expect(minutes).toEqual([0, 5, 10, 20, 40, 80, 160, 320, 360]);
  });
});

describe('reconciliation cursor (in process)', () => {
  it('is kept until cleared or until its time to live is over', async () => {
    let now = 0;
    const store = new MemoryReconcileCursorStore(() => now);
    await store.save({ startingAfter: 'evt_1', savedAt: 0 }, 1000);
    expect(await store.load()).toEqual({ startingAfter: 'evt_1', savedAt: 0 });
    now = 1000;
    expect(await store.load()).toBeUndefined();
    await store.save({ startingAfter: 'evt_2', savedAt: now }, 1000);
    await store.clear();
    expect(await store.load()).toBeUndefined();
  });
});
