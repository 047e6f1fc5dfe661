/**
 * The Redis client library loads on the first connection, so a process without REDIS_URL never pays for it. A load
 * that fails is a Redis failure like any other: the call fails with
 * SharedStateUnavailableError (which each caller already handles: fallback,
 * or a 400 the card provider retries), and the next call loads it again.
 */
import { describe, expect, it, vi } from 'vitest';
import { SharedStateUnavailableError } from '@/lib/errors';
import { RedisConnection } from '@/lib/redis/connection';

const attempts = vi.hoisted(() => ({ count: 0, clients: 0 }));
vi.mock('redis', async (importOriginal) => {
  attempts.count += 1;
  if (attempts.count === 1) throw new Error('Cannot find module redis');
  const real = await importOriginal<typeof import('redis')>();
  return {
    ...real,
    createClient: ((...args: Parameters<typeof real.createClient>) => {
      attempts.clients += 1;
      return real.createClient(...args);
    }) as typeof real.createClient,
  };
});

describe('loading the Redis client library', () => {
  it('fails a call as shared state unavailable, and loads again on the next', async () => {
    // Nothing listens on port 9: once loaded, the client fails to connect, which is also that error.
    const connection = new RedisConnection({ url: 'redis://127.0.0.1:9', timeoutMs: 200 });
    try {
      const first = await connection.run('ping', (redis) => redis.ping()).catch((e: unknown) => e);
      expect(first).toBeInstanceOf(SharedStateUnavailableError);
      expect(first).toMatchObject({ details: { operation: 'load client' } });
      const second = await connection.run('ping', (redis) => redis.ping()).catch((e: unknown) => e);
      expect(second).toBeInstanceOf(SharedStateUnavailableError);
      expect(second).toMatchObject({ details: { operation: 'connect' } });
      expect(attempts.count).toBe(2);
    } finally {
      await connection.close();
    }
  });

  it('opens one client for calls that arrive together while the library loads', async () => {
    const connection = new RedisConnection({ url: 'redis://127.0.0.1:9', timeoutMs: 200 });
    const before = attempts.clients;
    try {
      const results = await Promise.all([1, 2, 3].map(() => connection.run('ping', (redis) => redis.ping()).catch((e: unknown) => e)));
      for (const result of results) expect(result).toBeInstanceOf(SharedStateUnavailableError);
      expect(attempts.clients - before).toBe(1);
    } finally {
      await connection.close();
    }
  });
});
