/**
 * The card webhook with its Redis connection cut while the instance sat idle (frozen): the
 * service's Redis behind a proxy that cuts on the test's word (tests/support/cutting-proxy.ts).
 */
import { once } from 'node:events';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { getConfig } from '@/lib/config';
import { getRedisConnection } from '@/lib/redis/connection';
import { resetServices } from '@/lib/services';
import { paidOrder } from '../support/card-events';
import { cuttingProxy } from '../support/cutting-proxy';
import { useTestEnv } from '../support/env';
import { createProviders } from '../support/providers';
import { noRedis, noRedisServerBinary, REDIS_SKIP_REASON, startDisposableRedis, testPrefix } from '../support/redis';

const skip = noRedis || noRedisServerBinary;
const reason = noRedis ? REDIS_SKIP_REASON : 'redis-server is not installed (set REDIS_SERVER_BIN)';

const { providers, server: msw } = createProviders();
beforeAll(() => msw.listen({ onUnhandledRequest: 'error' }));
afterEach(() => msw.resetHandlers());
afterAll(() => msw.close());
beforeEach(() => providers.reset());
afterEach(() => resetServices());

describe.skipIf(skip)(`the card webhook after an idle cut${skip ? ` (skipped: ${reason})` : ''}`, () => {
  it.each([
    ['closed while idle', 'close'],
    ['reset under the first command', 'reset'],
  ] as const)('its first delivery after the connection was %s is applied, over one reconnection', async (_, how) => {
    const server = await startDisposableRedis();
    const proxy = await cuttingProxy(server.port);
    useTestEnv({ REDIS_URL: proxy.url, REDIS_KEY_PREFIX: testPrefix('idle-cut-route'), REDIS_TIMEOUT_MS: '2000' });
    // A delivery applied: the instance's connection is open, then the instance sits idle.
    await paidOrder(providers, 371);
    expect(proxy.accepted()).toBe(1);

    if (how === 'close') {
      const redis = await getRedisConnection(getConfig())!.client();
      const noticed = once(redis, 'error');
      proxy.cut();
      await noticed;
    } else {
      proxy.forget();
    }
    // Asserts the delivery is answered 200 (not 400 and a Stripe retry).
    await paidOrder(providers, 372);
    expect(providers.orderUpdates(372).length).toBeGreaterThan(0);
    expect(proxy.accepted()).toBe(2);
    await proxy.close();
  });
});
