/**
 * When Redis fails: down, stopped mid-test, frozen (slow), or refusing our
 * password. Each test runs a disposable redis-server of its own, so stopping
 * or freezing it disturbs no other test. Every failure must surface as
 * SharedStateUnavailableError within about one timeout, never crash the
 * process, and never put the URL or password in a log line; the fallback
 * wrappers then use this instance's memory and warn at most once a minute.
 */
import { describe, expect, it } from 'vitest';
import { OrderBusyError, SharedStateUnavailableError } from '@/lib/errors';
import { FallbackWarning } from '@/lib/shared-state/fallback';
import { orderLocksWithFallback, orderLocksWithoutFallback } from '@/lib/shared-state/order-locks';
import { rateLimiterWithFallback } from '@/lib/shared-state/rate-limit';
import { RedisOrderLocks } from '@/lib/shared-state/order-locks';
import { RedisProcessedEvents } from '@/lib/shared-state/processed-events';
import { RedisRateLimiter } from '@/lib/shared-state/request-redis';
import { MemoryOrderLocks } from '@/lib/shared-state/order-locks';
import { MemoryRateLimiter, type RateLimitRule } from '@/lib/shared-state/rate-limit';
import { MemoryShippedStatus, RedisShippedStatus, shippedStatusWithFallback } from '@/lib/shared-state/shipped-status';
import { applyEventOnce } from '@/lib/card-payments/apply-event';
import { freePort } from '@/stand-ins/loopback-http';
import { eventually, noRedis, noRedisServerBinary, REDIS_SKIP_REASON, observedConnection, redisConnection, startDisposableRedis, testPrefix } from '../support/redis';
import { loggedLines } from '../support/setup';

const RULE: RateLimitRule = { name: 'submit-order', limit: 10, windowMs: 60_000 };
const skip = noRedis || noRedisServerBinary;
const reason = noRedis ? REDIS_SKIP_REASON : 'redis-server is not installed (set REDIS_SERVER_BIN)';

function fallbackWarnings() {
  return loggedLines().filter((line) => line.event === 'redis.fallback_to_memory');
}

async function failureOf(run: () => Promise<unknown>): Promise<{ error: unknown; ms: number }> {
  const started = Date.now();
  try {
    await run();
  } catch (error) {
    return { error, ms: Date.now() - started };
  }
  throw new Error('expected a failure');
}

describe.skipIf(skip)(`when Redis fails${skip ? ` (skipped: ${reason})` : ''}`, () => {
  it('down: nothing listens, a call fails within the timeout as SharedStateUnavailableError', async () => {
    const connection = redisConnection(`redis://127.0.0.1:${await freePort()}`, 300);
    // The client library is loaded on a process's first connection: loaded here first, so the bound
    // below measures the connection's timeout, not the loading of a module on a busy machine.
    await import('redis');
    const { error, ms } = await failureOf(() => connection.run('ping', (redis) => redis.ping()));
    expect(error).toBeInstanceOf(SharedStateUnavailableError);
    // Promptly, not after the client's reconnection attempts: a bound, generous enough for a saturated machine.
    expect(ms).toBeLessThan(5_000);
    // Later calls fail too (the client keeps reconnecting in the background) and nothing crashed.
    await expect(connection.run('ping', (redis) => redis.ping())).rejects.toBeInstanceOf(SharedStateUnavailableError);
  });

  it('stopped mid-test: the limiter falls back to memory with one warning, then finds Redis again', async () => {
    const server = await startDisposableRedis();
    const connection = redisConnection(server.url, 300);
    const prefix = testPrefix('outage-limiter');
    const memory = new MemoryRateLimiter();
    const limiter = rateLimiterWithFallback(new RedisRateLimiter(connection, { prefix }), memory, new FallbackWarning());

    expect((await limiter.hit(RULE, 'client')).remaining).toBe(9);
    expect(memory.size).toBe(0);
    await server.stop();

    for (let i = 0; i < 3; i += 1) expect((await limiter.hit(RULE, 'client')).allowed).toBe(true);
    expect(memory.size).toBe(1);
    const warnings = fallbackWarnings();
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({ level: 'warn', part: 'rate_limiter' });
    expect(JSON.stringify(loggedLines())).not.toContain(String(server.port));

    await server.restart();
    await eventually(async () => (await connection.run('ping', (redis) => redis.ping()).catch(() => '')) === 'PONG');
    // A fresh server: the shared window starts again, and memory is no longer consulted.
    expect((await limiter.hit(RULE, 'client')).remaining).toBe(9);
    expect(fallbackWarnings()).toHaveLength(1);
  });

  it('slow: a SET NX that times out is no fallback: its late answer decides, and the task runs under the Redis lock', async () => {
    const server = await startDisposableRedis();
    const connection = redisConnection(server.url, 300);
    const prefix = testPrefix('outage-slow');
    await connection.run('ping', (redis) => redis.ping());
    const locks = orderLocksWithFallback(
      new RedisOrderLocks(connection, { prefix, ttlMs: 10_000, waitMs: 10_000 }),
      new MemoryOrderLocks(),
      new FallbackWarning(),
    );
    let thawed = false;
    const runs: boolean[] = [];
    server.freeze();
    let result: Promise<string>;
    try {
      result = locks.withOrderLock(5, async () => {
        runs.push(thawed);
        return 'written';
      });
      // The SET has timed out; Redis has not answered yet.
      await eventually(async () => loggedLines().some((line) => line.event === 'redis.lock_answer_late'));
      expect(runs).toEqual([]);
    } finally {
      thawed = true;
      server.thaw();
    }
    await expect(result).resolves.toBe('written');
    // Ran once, after Redis answered that the lock was taken, and never on this instance's memory alone.
    expect(runs).toEqual([true]);
    expect(fallbackWarnings()).toEqual([]);
    expect(await connection.run('exists', (redis) => redis.exists(`${prefix}{gate}:lock:order:5`))).toBe(0);
  });

  it('a Redis silent for the whole wait answers busy, never a fallback, and the lock it applies late is taken back', async () => {
    const server = await startDisposableRedis();
    const connection = redisConnection(server.url, 300);
    const prefix = testPrefix('outage-frozen');
    await connection.run('ping', (redis) => redis.ping());
    const locks = orderLocksWithFallback(
      new RedisOrderLocks(connection, { prefix, ttlMs: 60_000, waitMs: 1_000 }),
      new MemoryOrderLocks(),
      new FallbackWarning(),
    );
    let ran = false;
    server.freeze();
    try {
      await expect(
        locks.withOrderLock(7, async () => {
          ran = true;
        }),
      ).rejects.toBeInstanceOf(OrderBusyError);
    } finally {
      server.thaw();
    }
    expect(ran).toBe(false);
    expect(fallbackWarnings()).toEqual([]);
    expect(loggedLines()).toContainEqual(expect.objectContaining({ event: 'redis.lock_in_doubt', level: 'warn', orderId: 7, cause: 'no_answer' }));
    // The SET was applied when Redis woke up, and so was the release queued behind it on the same connection: once a
    // PING sent after both is answered, the order is free, not for the 60 s of the TTL.
    await connection.run('ping', (redis) => redis.ping());
    const stats = await connection.run('info', (redis) => redis.info('commandstats'));
    expect(stats).toMatch(/cmdstat_(evalsha|eval):calls=[1-9]/);
    expect(await connection.run('exists', (redis) => redis.exists(`${prefix}{gate}:lock:order:7`))).toBe(0);
    await expect(locks.withOrderLock(7, async () => 'next writer')).resolves.toBe('next writer');
  });

  it('two instances while Redis is slow: the one whose SET timed out waits for the holder instead of writing beside it', async () => {
    const server = await startDisposableRedis();
    const prefix = testPrefix('outage-slow-two');
    // Each instance has its own connection (connected: both have been serving requests) and its own memory.
    const instance = async () => {
      const connection = redisConnection(server.url, 300);
      await connection.run('ping', (redis) => redis.ping());
      return orderLocksWithFallback(
        new RedisOrderLocks(connection, { prefix, ttlMs: 10_000, waitMs: 10_000 }),
        new MemoryOrderLocks(),
        new FallbackWarning(),
      );
    };
    const [holderLocks, latecomerLocks] = [await instance(), await instance()];
    const writes: string[] = [];
    let holderIn!: () => void;
    let finishHolder!: () => void;
    const holderHolds = new Promise<void>((resolve) => (holderIn = resolve));
    const holderMayFinish = new Promise<void>((resolve) => (finishHolder = resolve));
    const holder = holderLocks.withOrderLock(8, async () => {
      writes.push('holder:read');
      holderIn();
      await holderMayFinish;
      writes.push('holder:write');
    });
    await holderHolds;

    server.freeze();
    let latecomer: Promise<void>;
    try {
      latecomer = latecomerLocks.withOrderLock(8, async () => {
        writes.push('latecomer:read');
        writes.push('latecomer:write');
      });
      await eventually(async () => loggedLines().some((line) => line.event === 'redis.lock_answer_late'));
    } finally {
      server.thaw();
    }
    // Redis answered the late SET: held. The latecomer waits, whatever time that takes the holder.
    await eventually(async () => (await redisConnection(server.url).run('exists', (redis) => redis.exists(`${prefix}{gate}:lock:order:8`))) === 1);
    expect(writes).toEqual(['holder:read']);
    finishHolder();
    await Promise.all([holder, latecomer]);
    expect(writes).toEqual(['holder:read', 'holder:write', 'latecomer:read', 'latecomer:write']);
    expect(fallbackWarnings()).toEqual([]);
  });

  it('a task that ran under the shared lock is never run again by the fallback', async () => {
    const server = await startDisposableRedis();
    const connection = redisConnection(server.url, 300);
    const locks = orderLocksWithFallback(
      new RedisOrderLocks(connection, { prefix: testPrefix('outage-once'), ttlMs: 10_000 }),
      new MemoryOrderLocks(),
      new FallbackWarning(),
    );
    let runs = 0;
    await expect(
      locks.withOrderLock(6, async () => {
        runs += 1;
        // Redis goes away while the task runs; the task's own Redis call fails.
        await server.stop();
        throw new SharedStateUnavailableError('event_check');
      }),
    ).rejects.toBeInstanceOf(SharedStateUnavailableError);
    expect(runs).toBe(1);
  });

  it('a writer that found the order held and then lost Redis answers busy: it never falls back beside the holder', async () => {
    for (const outage of ['stopped', 'frozen'] as const) {
      const server = await startDisposableRedis();
      const prefix = testPrefix(`outage-held-${outage}`);
      // The holder is another instance: its own connection and its own memory. Timeouts generous
      // enough for a busy machine: the waiter's must still end its calls once Redis is frozen.
      const holder = new RedisOrderLocks(redisConnection(server.url, 5_000), { prefix, ttlMs: 10_000 });
      const waiterConnection = observedConnection(server.url, 1_500);
      const waiterLocks = orderLocksWithFallback(
        new RedisOrderLocks(waiterConnection, { prefix, ttlMs: 10_000, waitMs: 5_000 }),
        new MemoryOrderLocks(),
        new FallbackWarning(),
      );
      let release!: () => void;
      let holds!: () => void;
      const holding = new Promise<void>((resolve) => (holds = resolve));
      const held = holder.withOrderLock(12, () => {
        holds();
        return new Promise<void>((resolve) => (release = resolve));
      });
      await holding;
      let ran = false;
      const firstAttempt = waiterConnection.answered('lock_acquire');
      // Its failure is caught at once: under load it can come while Redis is still being stopped, and an
      // outcome nobody listens to yet is an unhandled rejection.
      const waiting = waiterLocks
        .withOrderLock(12, async () => {
          ran = true;
        })
        .then(() => undefined, (error: unknown) => error);
      // The waiter's SET NX has found the order held; then Redis goes away.
      await firstAttempt;
      if (outage === 'stopped') await server.stop();
      else server.freeze();
      try {
        expect(await waiting).toBeInstanceOf(OrderBusyError);
        expect(ran).toBe(false);
        expect(loggedLines().filter((line) => line.event === 'redis.lock_lost_while_waiting')).not.toEqual([]);
      } finally {
        server.thaw();
        release();
        await held;
      }
    }
  });

  it("this instance's lock is taken always: checkout falling back waits for the card webhook holding the shared lock on the same instance", async () => {
    const server = await startDisposableRedis();
    const prefix = testPrefix('outage-instance-lock');
    const shared = new RedisOrderLocks(redisConnection(server.url, 300), { prefix, ttlMs: 10_000 });
    const instance = new MemoryOrderLocks();
    const cardEventLocks = orderLocksWithoutFallback(shared, instance);
    const checkoutLocks = orderLocksWithFallback(shared, instance, new FallbackWarning());
    const writes: string[] = [];
    let webhookHolds!: () => void;
    const holding = new Promise<void>((resolve) => (webhookHolds = resolve));
    const webhook = cardEventLocks.withOrderLock(13, async () => {
      writes.push('webhook:read');
      // Redis goes away while the webhook works under its shared lock; checkout starts only once it is gone,
      // so its first call cannot find the shared lock held (which would make it answer busy, not fall back).
      await server.stop();
      webhookHolds();
      // Not an ordering: the instance lock orders the two; this only gives a broken lock the time to show.
      await new Promise((resolve) => setTimeout(resolve, 100));
      writes.push('webhook:write processing');
    });
    await holding;
    // Submit-order finds Redis unreachable from its first call and falls back: to this instance's lock, held by the webhook.
    const checkout = checkoutLocks.withOrderLock(13, async () => {
      writes.push('checkout:read');
      writes.push('checkout:write pending');
    });
    await Promise.all([webhook, checkout]);
    expect(writes).toEqual(['webhook:read', 'webhook:write processing', 'checkout:read', 'checkout:write pending']);
    expect(fallbackWarnings()).toHaveLength(1);
  });

  it('the card webhook takes no fallback: Redis unreachable from the first call fails it, and it holds no instance lock after', async () => {
    const instance = new MemoryOrderLocks();
    const cardEventLocks = orderLocksWithoutFallback(
      new RedisOrderLocks(redisConnection(`redis://127.0.0.1:${await freePort()}`, 300), { prefix: testPrefix('outage-card'), ttlMs: 10_000 }),
      instance,
    );
    let ran = false;
    await expect(
      cardEventLocks.withOrderLock(14, async () => {
        ran = true;
      }),
    ).rejects.toBeInstanceOf(SharedStateUnavailableError);
    expect(ran).toBe(false);
    expect(instance.activeKeys).toBe(0);
  });

  it('the card webhook does not fall back: Redis lost after the effects were written fails the delivery, to be retried', async () => {
    const server = await startDisposableRedis();
    const connection = redisConnection(server.url, 300);
    const prefix = testPrefix('outage-record');
    const services = {
      cardEventLocks: new RedisOrderLocks(connection, { prefix, ttlMs: 10_000 }),
      processedEvents: new RedisProcessedEvents(connection, { prefix }),
    };
    let applied = 0;
    const apply = async () => {
      applied += 1;
      if (applied === 1) await server.stop();
      return 'paid' as const;
    };
    // The event memory cannot be written: the delivery fails (the route answers 400) and Stripe retries.
    await expect(applyEventOnce(services, 31, 'evt_lost_record', apply)).rejects.toBeInstanceOf(SharedStateUnavailableError);
    await server.restart();
    await eventually(async () => (await connection.run('ping', (redis) => redis.ping()).catch(() => '')) === 'PONG');
    // The retry runs the handler again (its status gate finds the order paid) and is then remembered.
    expect(await applyEventOnce(services, 31, 'evt_lost_record', apply)).toBe('paid');
    expect(applied).toBe(2);
    expect(await applyEventOnce(services, 31, 'evt_lost_record', apply)).toBe('duplicate_event');
  });

  it('auth error: a wrong password fails as SharedStateUnavailableError, and no log line carries it', async () => {
    const server = await startDisposableRedis({ password: 'right-password-1234' });
    const connection = redisConnection(server.url.replace('right-password-1234', 'wrong-password-9876'), 300);
    const { error } = await failureOf(() => connection.run('ping', (redis) => redis.ping()));
    expect(error).toBeInstanceOf(SharedStateUnavailableError);
    const memory = new MemoryShippedStatus();
    const status = shippedStatusWithFallback(new RedisShippedStatus(connection), memory, new FallbackWarning());
    await status.rememberShippedMissing();
    expect(await status.statusToWrite()).toBe('completed');
    const logs = JSON.stringify(loggedLines());
    expect(logs).not.toContain('wrong-password');
    expect(logs).not.toContain('right-password');
    expect(JSON.stringify((error as SharedStateUnavailableError).details)).not.toContain('password-');
  });

  it('warns at most once a minute, whichever part falls back', () => {
    let now = 0;
    const warning = new FallbackWarning(() => now);
    const error = new SharedStateUnavailableError('connect');
    warning.note('rate_limiter', error);
    warning.note('order_locks', error);
    now += 59_999;
    warning.note('rate_limiter', error);
    expect(fallbackWarnings()).toHaveLength(1);
    now += 1;
    warning.note('order_locks', error);
    expect(fallbackWarnings().map((line) => line.part)).toEqual(['rate_limiter', 'order_locks']);
  });

  it('a connection that never connected is retried on the next call once Redis is there', async () => {
    const port = await freePort();
    const connection = redisConnection(`redis://127.0.0.1:${port}`, 300);
    await expect(connection.client()).rejects.toBeInstanceOf(SharedStateUnavailableError);
    await startDisposableRedis({ port });
    await eventually(async () => (await connection.run('ping', (redis) => redis.ping()).catch(() => '')) === 'PONG');
  });
});
