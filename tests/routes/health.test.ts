/** GET /api/health: cheap and upstream-free without credentials; each upstream checked with the cron token. */
import { beforeEach, describe, expect, it } from 'vitest';
import { GET } from '@/app/api/health/route';
import packageJson from '@/package.json';
import { TEST_CONSUMER_SECRET, TEST_CRON_SECRET, TEST_STORE_URL, TEST_STRIPE_KEY, useTestEnv } from '../support/env';
import { useProviders } from '../support/providers';
import { noRedis, noRedisServerBinary, REDIS_SKIP_REASON, REDIS_URL, startDisposableRedis, testPrefix } from '../support/redis';
import { loggedLines } from '../support/setup';

const providers = useProviders();

beforeEach(() => {
  useTestEnv({ CRON_SECRET: TEST_CRON_SECRET });
  providers.reset();
});

async function health(authorization?: string) {
  const headers: Record<string, string> = authorization ? { authorization } : {};
  const response = await GET(new Request('http://localhost:3000/api/health', { headers }));
  return { status: response.status, body: await response.json(), headers: response.headers };
}

describe('health', () => {
  it('answers ok and the version without calling any upstream', async () => {
    const { status, body, headers } = await health();
    expect(status).toBe(200);
    expect(body).toEqual({ status: 'ok', version: packageJson.version });
    expect(headers.get('cache-control')).toBe('no-store');
    expect(providers.calls).toEqual([]);
  });

  it('stays cheap even when the upstream settings are missing', async () => {
    useTestEnv({ CRON_SECRET: TEST_CRON_SECRET, WOOCOMMERCE_URL: undefined, STRIPE_SECRET_KEY: undefined });
    expect(await health()).toMatchObject({ status: 200, body: { status: 'ok' } });
  });

  it('with the cron token checks the store and the card provider, with latency', async () => {
    const { status, body } = await health(`Bearer ${TEST_CRON_SECRET}`);
    expect(status).toBe(200);
    expect(body).toEqual({
      status: 'ok',
      version: packageJson.version,
      checks: {
        store: { ok: true, latencyMs: expect.any(Number) },
        card: { ok: true, latencyMs: expect.any(Number) },
      },
      // The test storefront's domain was never registered for wallets: named, without degrading.
      walletDomains: [{ domain: 'storefront.test', problem: 'not_registered' }],
    });
    expect(providers.callsTo('store', 'GET', /\/orders$/)).toHaveLength(1);
    expect(providers.callsTo('card', 'GET', /\/v1\/events$/)).toHaveLength(1);
  });

  it('reports a failed upstream as failed with 503, revealing no configuration or upstream message', async () => {
    providers.failStore('GET', /\/orders$/, 503, 'internal_server_error');
    const { status, body } = await health(`Bearer ${TEST_CRON_SECRET}`);
    expect(status).toBe(503);
    expect(body).toMatchObject({ status: 'degraded', checks: { store: { ok: false }, card: { ok: true } } });
    const text = JSON.stringify(body);
    for (const secret of [TEST_STORE_URL, 'shop.test', TEST_CONSUMER_SECRET, TEST_STRIPE_KEY, TEST_CRON_SECRET, 'Upstream failure']) {
      expect(text).not.toContain(secret);
    }
    expect(loggedLines()).toContainEqual(expect.objectContaining({ event: 'health.check_failed', check: 'store', reason: 'store' }));
  });

  it('reports an unconfigured part as failed', async () => {
    useTestEnv({ CRON_SECRET: TEST_CRON_SECRET, STRIPE_SECRET_KEY: undefined });
    const { status, body } = await health(`Bearer ${TEST_CRON_SECRET}`);
    expect(status).toBe(503);
    expect(body.checks).toEqual({ store: expect.objectContaining({ ok: true }), card: expect.objectContaining({ ok: false }) });
  });

  it('answers 401 to a wrong token, and to any token when CRON_SECRET is unset: the caller never learns the configuration', async () => {
    expect(await health('Bearer wrong-token-0123456789abcdef')).toMatchObject({ status: 401, body: { error: 'Unauthorized' } });
    useTestEnv({ CRON_SECRET: undefined });
    for (const header of [`Bearer ${TEST_CRON_SECRET}`, 'Bearer wrong-token-0123456789abcdef', 'Basic x']) {
      const answer = await health(header);
      expect(answer.status).toBe(401);
      expect(answer.body).toEqual({ error: 'Unauthorized' });
    }
    // The operator learns it from the log.
    expect(loggedLines()).toContainEqual(expect.objectContaining({ event: 'cron.secret_unset', level: 'warn' }));
    expect(providers.calls).toEqual([]);
  });
});

describe.skipIf(noRedis)(`health with REDIS_URL set${noRedis ? ` (skipped: ${REDIS_SKIP_REASON})` : ''}`, () => {
  it('with the cron token also pings Redis, with its latency', async () => {
    useTestEnv({ CRON_SECRET: TEST_CRON_SECRET, REDIS_URL, REDIS_KEY_PREFIX: testPrefix('health') });
    const { status, body } = await health(`Bearer ${TEST_CRON_SECRET}`);
    expect(status).toBe(200);
    expect(body).toEqual({
      status: 'ok',
      version: packageJson.version,
      checks: {
        store: { ok: true, latencyMs: expect.any(Number) },
        card: { ok: true, latencyMs: expect.any(Number) },
        redis: { ok: true, latencyMs: expect.any(Number) },
      },
      walletDomains: [{ domain: 'storefront.test', problem: 'not_registered' }],
    });
  });

  it.skipIf(noRedisServerBinary)('reports a stopped Redis as failed with 503 degraded, revealing no URL', async () => {
    const server = await startDisposableRedis({ password: 'health-redis-password-5f1e' });
    useTestEnv({ CRON_SECRET: TEST_CRON_SECRET, REDIS_URL: server.url, REDIS_KEY_PREFIX: testPrefix('health-down') });
    await server.stop();
    const { status, body } = await health(`Bearer ${TEST_CRON_SECRET}`);
    expect(status).toBe(503);
    expect(body).toMatchObject({ status: 'degraded', checks: { store: { ok: true }, card: { ok: true }, redis: { ok: false } } });
    expect(loggedLines()).toContainEqual(
      expect.objectContaining({ event: 'health.check_failed', check: 'redis', reason: 'shared_state_unavailable' }),
    );
    const everything = JSON.stringify(body) + JSON.stringify(loggedLines());
    for (const secret of ['health-redis-password-5f1e', `127.0.0.1:${server.port}`, 'redis://']) expect(everything).not.toContain(secret);
  });
});
