/**
 * A connection cut while idle (a serverless instance frozen past Redis' `timeout` or a NAT's idle
 * limit): a real redis-server behind a loopback proxy that cuts its connections when the test says so.
 */
import { once } from 'node:events';
import { describe, expect, it, vi } from 'vitest';
import { SharedStateUnavailableError } from '@/lib/errors';
import { loadRequestScripts } from '@/lib/shared-state/request-redis';
import { RedisOrderLocks } from '@/lib/shared-state/order-locks';
import { cuttingProxy } from '../support/cutting-proxy';
import { noRedis, noRedisServerBinary, REDIS_SKIP_REASON, REDIS_URL, redisConnection, startDisposableRedis, testPrefix } from '../support/redis';

const skip = noRedis || noRedisServerBinary;
const reason = noRedis ? REDIS_SKIP_REASON : 'redis-server is not installed (set REDIS_SERVER_BIN)';

async function setUp() {
  const server = await startDisposableRedis();
  const proxy = await cuttingProxy(server.port);
  // Generous for a busy machine: the point is one reconnection inside the call's own bound, not its speed.
  const connection = redisConnection(proxy.url, 5_000);
  const locks = new RedisOrderLocks(connection, { ttlMs: 30_000, prefix: testPrefix('idle-cut') });
  await connection.run('ping', (redis) => redis.ping());
  return { proxy, connection, locks };
}

describe.skipIf(skip)(`Redis connection cut while idle${skip ? ` (skipped: ${reason})` : ''}`, () => {
  it('a call that finds its connection closed while idle waits for one reconnection and succeeds', async () => {
    const { proxy, connection, locks } = await setUp();
    const redis = await connection.client();
    const noticed = once(redis, 'error');
    proxy.cut();
    await noticed;
    expect(redis.isReady).toBe(false);

    // The card webhook's shared-state calls: the event checked and the lock taken, then both released.
    const outcome = await locks.withEventLock(41, 'cardprovider:evt_after_cut', async () => ({ remember: true, result: 'applied' }));
    expect(outcome).toEqual({ duplicate: false, result: 'applied' });
    expect(proxy.accepted()).toBe(2);
    await proxy.close();
  });

  it('a repeatable call written into a connection that was reset is sent again once, after one reconnection', async () => {
    const { proxy, locks } = await setUp();
    proxy.forget();

    const outcome = await locks.withEventLock(42, 'cardprovider:evt_after_reset', async () => ({ remember: true, result: 'applied' }));
    expect(outcome).toEqual({ duplicate: false, result: 'applied' });
    expect(proxy.accepted()).toBe(2);
    // The event is remembered and the lock free: a redelivery is a duplicate, taken at once.
    expect(await locks.withEventLock(42, 'cardprovider:evt_after_reset', async () => ({ remember: true, result: 'again' }))).toEqual({ duplicate: true });
    await proxy.close();
  });

  it('a lock applied before the cut is found as its own when the entry is sent again', async () => {
    const { proxy, connection, locks } = await setUp();
    const redis = await connection.client();
    // Loaded as an instance's start does, so the entry is one EVALSHA that Redis applies.
    await loadRequestScripts(redis);
    // The cut comes after Redis applied the entry: its answer is lost, the repeat finds the lock held with its own token.
    let first = true;
    const realEvalSha = redis.evalSha.bind(redis);
    const cutAfterFirstAnswer = async (...args: Parameters<typeof realEvalSha>) => {
      const answer = await realEvalSha(...args);
      if (!first) return answer;
      first = false;
      const noticed = once(redis, 'error');
      proxy.cut();
      await noticed;
      throw Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' });
    };
    Object.defineProperty(redis, 'evalSha', { value: cutAfterFirstAnswer, configurable: true });

    const outcome = await locks.withOrderLock(43, async () => 'written');
    expect(outcome).toBe('written');
    expect(first).toBe(false);
    expect(proxy.accepted()).toBe(2);
    await proxy.close();
  });

  it('a call that is not safe to repeat, written into a connection that was reset, fails as before', async () => {
    const { proxy, connection } = await setUp();
    const key = `${testPrefix('idle-cut')}counter`;
    proxy.forget();

    await expect(connection.run('rate_limit', (redis) => redis.incr(key))).rejects.toBeInstanceOf(SharedStateUnavailableError);
    // Not sent again: the next call finds the counter untouched, over the one reconnection.
    expect(await connection.run('rate_limit', (redis) => redis.get(key))).toBeNull();
    expect(proxy.accepted()).toBe(2);
    await proxy.close();
  });

  it('once a reconnection has failed, calls fail at once again while Redis stays away', async () => {
    const { proxy, connection } = await setUp();
    const redis = await connection.client();
    proxy.greet('refuse');
    const noticed = once(redis, 'error');
    proxy.cut();
    await noticed;
    // The first call waits for the first reconnection, which the proxy refuses.
    await expect(connection.run('ping', (client) => client.ping())).rejects.toBeInstanceOf(SharedStateUnavailableError);
    // Later attempts hang: a call that waited for one would last its whole bound (5 s).
    proxy.greet('hold');
    const started = Date.now();
    await expect(connection.run('ping', (client) => client.ping())).rejects.toBeInstanceOf(SharedStateUnavailableError);
    expect(Date.now() - started).toBeLessThan(4_000);
    await proxy.close();
  });

  it('an idle connection sends a PING every minute, so idle cuts of Redis and load balancers never come', async () => {
    // Only the timers: node-redis arms its PING with setTimeout once the connection is ready.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      const connection = redisConnection(REDIS_URL as string, 2_000);
      const redis = await connection.client();
      const pinged = once(redis, 'ping-interval');
      vi.advanceTimersByTime(60_000);
      expect(await pinged).toEqual(['PONG']);
    } finally {
      vi.useRealTimers();
    }
  });
});
