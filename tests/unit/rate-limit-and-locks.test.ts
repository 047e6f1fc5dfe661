import { describe, expect, it } from 'vitest';
import { OrderBusyError } from '@/lib/errors';
import { MemoryOrderLocks } from '@/lib/shared-state/order-locks';
import { MemoryProcessedEvents } from '@/lib/shared-state/processed-events';
import { MemoryRateLimiter, RATE_LIMITS } from '@/lib/shared-state/rate-limit';
import { withRequestDeadline } from '@/lib/upstream/budget';

describe('fixed-window rate limiter', () => {
  it('allows 10 requests in a window and refuses the 11th until the window resets', async () => {
    let now = 120_000 + 5_000;
    const limiter = new MemoryRateLimiter({ now: () => now });
    const rule = RATE_LIMITS.paymentIntent;
    for (let i = 1; i <= 10; i += 1) {
      const decision = await limiter.hit(rule, '203.0.113.1');
      expect(decision.allowed).toBe(true);
      expect(decision.remaining).toBe(10 - i);
    }
    const eleventh = await limiter.hit(rule, '203.0.113.1');
    expect(eleventh).toEqual({ allowed: false, limit: 10, remaining: 0, resetAt: 180_000 });
    now = 180_000;
    expect((await limiter.hit(rule, '203.0.113.1')).allowed).toBe(true);
  });

  it('keeps a counter per endpoint and per client', async () => {
    const limiter = new MemoryRateLimiter({ now: () => 1_000 });
    for (let i = 0; i < 10; i += 1) await limiter.hit(RATE_LIMITS.paymentIntent, 'a');
    expect((await limiter.hit(RATE_LIMITS.paymentIntent, 'a')).allowed).toBe(false);
    expect((await limiter.hit(RATE_LIMITS.submitOrder, 'a')).allowed).toBe(true);
    expect((await limiter.hit(RATE_LIMITS.paymentIntent, 'b')).allowed).toBe(true);
  });

  it('stays bounded under a flood of distinct addresses', async () => {
    const limiter = new MemoryRateLimiter({ maxClients: 100, now: () => 1_000 });
    for (let i = 0; i < 5_000; i += 1) await limiter.hit(RATE_LIMITS.cardWebhook, `10.0.${i >> 8}.${i & 255}`);
    expect(limiter.size).toBe(100);
  });
});

describe('per-order lock', () => {
  it('runs tasks for one order one at a time, in arrival order', async () => {
    const locks = new MemoryOrderLocks();
    const events: string[] = [];
    let releaseA!: () => void;
    let aHolds!: () => void;
    const aHolding = new Promise<void>((resolve) => (aHolds = resolve));
    const task = (name: string, held?: Promise<void>) => async () => {
      events.push(`start ${name}`);
      await held;
      events.push(`end ${name}`);
      return name;
    };
    const aHeld = new Promise<void>((resolve) => (releaseA = resolve));
    const a = locks.withOrderLock(1, async () => {
      aHolds();
      return task('a', aHeld)();
    });
    const b = locks.withOrderLock(1, task('b'));
    const c = locks.withOrderLock(1, task('c'));
    // b and c arrive while a holds the lock; a lock that let them in would see them end before a.
    await aHolding;
    releaseA();
    const results = await Promise.all([a, b, c]);
    expect(results).toEqual(['a', 'b', 'c']);
    expect(events).toEqual(['start a', 'end a', 'start b', 'end b', 'start c', 'end c']);
    expect(locks.activeKeys).toBe(0);
  });

  it('lets different orders run at the same time and releases after a failure', async () => {
    const locks = new MemoryOrderLocks();
    // Each task waits until both are inside their lock: if one order's lock held the other back, this never ends.
    let inside = 0;
    let bothInside!: () => void;
    const together = new Promise<void>((resolve) => (bothInside = resolve));
    const task = async () => {
      inside += 1;
      if (inside === 2) bothInside();
      await together;
    };
    await Promise.all([locks.withOrderLock(1, task), locks.withOrderLock(2, task)]);
    expect(inside).toBe(2);
    await expect(locks.withOrderLock(3, async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    await expect(locks.withOrderLock(3, async () => 'after')).resolves.toBe('after');
  });

  it('gives up waiting with OrderBusyError', async () => {
    const locks = new MemoryOrderLocks({ waitMs: 20 });
    let finish!: () => void;
    const holder = locks.withOrderLock(1, () => new Promise<void>((resolve) => (finish = resolve)));
    await expect(locks.withOrderLock(1, async () => 'never')).rejects.toBeInstanceOf(OrderBusyError);
    finish();
    await holder;
  });

  it('a waiter that gave up leaves the order locked for the next one while the holder still works', async () => {
    const locks = new MemoryOrderLocks({ waitMs: 20 });
    let finish!: () => void;
    const holder = locks.withOrderLock(1, () => new Promise<void>((resolve) => (finish = resolve)));
    await expect(locks.withOrderLock(1, async () => 'never')).rejects.toBeInstanceOf(OrderBusyError);
    await expect(locks.withOrderLock(1, async () => 'beside the holder')).rejects.toBeInstanceOf(OrderBusyError);
    finish();
    await holder;
    await expect(locks.withOrderLock(1, async () => 'after')).resolves.toBe('after');
    expect(locks.activeKeys).toBe(0);
  });

  it("waits only while its request's deadline leaves the reserve for the work, then answers busy", async () => {
    // 3 s left, 2.7 s of them kept for the work: 0.3 s to wait, 2.7 s of slack for a busy machine.
    const locks = new MemoryOrderLocks({ waitMs: 20_000, reserveMs: 2_700 });
    let release!: () => void;
    const holder = locks.withOrderLock(2, () => new Promise<void>((resolve) => (release = resolve)));
    let ran = false;
    const started = Date.now();
    const outcome = await withRequestDeadline(3_000, () =>
      locks.withOrderLock(2, async () => {
        ran = true;
      }),
    ).catch((error: unknown) => error);
    const waited = Date.now() - started;
    release();
    await holder;
    expect(outcome).toBeInstanceOf(OrderBusyError);
    expect(ran).toBe(false);
    expect(waited).toBeLessThan(3_000);
    await expect(withRequestDeadline(500, () => locks.withOrderLock(2, async () => 'taken'))).resolves.toBe('taken');
  });
});

describe('processed events', () => {
  it('remembers event ids', async () => {
    const events = new MemoryProcessedEvents();
    expect(await events.has('evt_1')).toBe(false);
    await events.remember('evt_1');
    expect(await events.has('evt_1')).toBe(true);
  });
});
