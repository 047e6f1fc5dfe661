/**
 * The Redis client is started when the instance starts (instrumentation.ts →
 * lib/preload.ts), in a copy of the modules Next.js keeps apart from the
 * routes'. The routes' copy must take that client over, not open a second
 * connection; here the second copy is the same modules imported again after
 * vi.resetModules(), against a real Redis.
 */
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { monitorRedis, noRedis, REDIS_SKIP_REASON, REDIS_URL, redisConnection, testPrefix } from '../support/redis';

type ConnectionModule = typeof import('@/lib/redis/connection');

async function freshCopy(): Promise<ConnectionModule> {
  vi.resetModules();
  return import('@/lib/redis/connection');
}

const settings = { redisUrl: REDIS_URL, redisTimeoutMs: 2_000 };
let copies: ConnectionModule[] = [];

afterEach(async () => {
  for (const copy of copies) await copy.closeRedisConnection();
  copies = [];
});

/** Connections the server has now, counted through a connection of the test's own (opened on first use). */
let observer: ReturnType<typeof redisConnection> | undefined;
async function connectionsNow(): Promise<number> {
  observer ??= redisConnection();
  return (await (await observer.client()).clientList()).length;
}

describe.skipIf(noRedis)(`the client started when the instance starts${noRedis ? ` (skipped: ${REDIS_SKIP_REASON})` : ''}`, () => {
  it("is the routes' client too: one connection for the process, ready for the first request", async () => {
    const startUp = await freshCopy();
    const routes = await freshCopy();
    copies = [startUp, routes];
    expect(routes.RedisConnection).not.toBe(startUp.RedisConnection);
    const before = await connectionsNow();
    const started = await startUp.getRedisConnection(settings)!.client();
    const taken = await routes.getRedisConnection(settings)!.client();
    expect(taken).toBe(started);
    expect(await connectionsNow()).toBe(before + 1);
    await expect(routes.getRedisConnection(settings)!.run('ping', (redis) => redis.ping())).resolves.toBe('PONG');
  });

  it('a test\'s "other instance" keeps a connection of its own', async () => {
    const copy = await freshCopy();
    copies = [copy];
    const process = await copy.getRedisConnection(settings)!.client();
    const other = await new copy.RedisConnection({ url: REDIS_URL as string, timeoutMs: 2_000 }).client();
    expect(other).not.toBe(process);
    other.destroy();
  });

  it('a closed connection is forgotten: the next one starts afresh', async () => {
    const first = await freshCopy();
    const second = await freshCopy();
    copies = [first, second];
    const old = await first.getRedisConnection(settings)!.client();
    await first.closeRedisConnection();
    const fresh = await second.getRedisConnection(settings)!.client();
    expect(fresh).not.toBe(old);
    expect(fresh.isReady).toBe(true);
  });
});

describe('preloading when the instance starts', () => {
  it('starts what a first request needs without waiting for it, and an unreachable Redis is only a head start lost', async () => {
    vi.resetModules();
    const { useTestEnv } = await import('../support/env');
    useTestEnv({ REDIS_URL: 'redis://127.0.0.1:9', REDIS_TIMEOUT_MS: '200' });
    const { preloadAtStart } = await import('@/lib/preload');
    const { getRedisConnection } = await import('@/lib/redis/connection');
    const { getConfig } = await import('@/lib/config');
    const { SharedStateUnavailableError } = await import('@/lib/errors');
    expect(() => preloadAtStart()).not.toThrow();
    // The request that needs Redis meets the failure itself, as it would have without the preload.
    const failure = await getRedisConnection(getConfig())!.run('ping', (redis) => redis.ping()).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(SharedStateUnavailableError);
    const { resetServices } = await import('@/lib/services');
    resetServices();
  });
});

describe('the instance start', () => {
  afterEach(() => {
    vi.doUnmock('@/lib/preload');
    vi.unstubAllEnvs();
  });

  it('a preload that cannot even be loaded is only a head start lost: no unhandled rejection to crash or log a stack', async () => {
    vi.resetModules();
    const { useTestEnv } = await import('../support/env');
    useTestEnv({});
    vi.stubEnv('NEXT_RUNTIME', 'nodejs');
    vi.doMock('@/lib/preload', () => {
      throw new Error('a module of the preload failed to load');
    });
    const unhandled: unknown[] = [];
    const note = (reason: unknown) => void unhandled.push(reason);
    process.on('unhandledRejection', note);
    try {
      const { register } = await import('@/instrumentation');
      await register();
      // Node reports an unhandled rejection after the microtasks of the turn that left it: two turns of the loop.
      for (let turn = 0; turn < 2; turn += 1) await new Promise((resolve) => setImmediate(resolve));
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', note);
    }
  });
});

describe.skipIf(noRedis)(`the scripts a request runs${noRedis ? ` (skipped: ${REDIS_SKIP_REASON})` : ''}`, () => {
  it("are in Redis' script cache once the instance has started: the first request's entry is one EVALSHA", async () => {
    vi.resetModules();
    const { useTestEnv } = await import('../support/env');
    useTestEnv({ REDIS_URL: REDIS_URL as string });
    const { preloadAtStart } = await import('@/lib/preload');
    const { countCheckLock } = await import('@/lib/shared-state/request-redis');
    const { resetServices } = await import('@/lib/services');
    const own = await redisConnection().client();
    await own.scriptFlush();
    await preloadAtStart();
    const monitor = await monitorRedis(REDIS_URL as string);
    try {
      const entry = countCheckLock(testPrefix('preloaded-scripts'), { lock: { orderId: 7, token: 't', ttlMs: 1_000 } });
      const commands = await monitor.commandsDuring(async () => expect(entry.read(await entry.send(own)).locked).toBe(true));
      expect(commands).toEqual(['evalsha']);
    } finally {
      await monitor.close();
      resetServices();
    }
  });
});

describe("the routes' own modules", () => {
  let dir: string | undefined;
  afterEach(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
    dir = undefined;
  });

  it('are loaded when the instance starts, through the route modules of the build; pages, and routes missing here, are left alone', async () => {
    dir = mkdtempSync(join(tmpdir(), 'preload-routes-'));
    const loaded: string[] = [];
    const holder = globalThis as typeof globalThis & { __preloadedRoutes?: string[] };
    holder.__preloadedRoutes = loaded;
    writeFileSync(
      join(dir, 'app-paths-manifest.json'),
      JSON.stringify({ '/page': 'app/page.js', '/api/a/route': 'app/api/a/route.js', '/api/gone/route': 'app/api/gone/route.js' }),
    );
    mkdirSync(join(dir, 'app', 'api', 'a'), { recursive: true });
    writeFileSync(join(dir, 'app', 'api', 'a', 'route.js'), "exports.routeModule = { ensureUserland: async () => { globalThis.__preloadedRoutes.push('a'); } };");
    writeFileSync(join(dir, 'app', 'page.js'), "globalThis.__preloadedRoutes.push('page');");
    const { preloadRoutes } = await import('@/lib/preload');
    await preloadRoutes(dir);
    expect(loaded).toEqual(['a']);
    // A server directory without a build: nothing to load, and nothing thrown.
    await expect(preloadRoutes(join(dir, 'nothing-here'))).resolves.toBeUndefined();
  });
});
