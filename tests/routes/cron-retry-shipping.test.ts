/**
 * Shipping replay: a shipping update the store could not take is queued by the
 * webhook (which still answers 200) and applied by GET /api/cron/retry-shipping
 * through the webhook's status gate; the tenth failed attempt parks it.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { GET } from '@/app/api/cron/retry-shipping/route';
import { POST } from '@/app/api/shipping/webhook/route';
import { replayShipping } from '@/lib/cron/retry-shipping';
import { getRedisConnection } from '@/lib/redis/connection';
import { RedisShippingReplayQueue } from '@/lib/shared-state/shipping-replay';
import { getServices, resetServices } from '@/lib/services';
import { MAX_REPLAY_ATTEMPTS, nextAttemptDelayMs } from '@/lib/shared-state/shipping-replay';
import { TEST_CRON_SECRET, useTestEnv } from '../support/env';
import { postJson } from '../support/requests';
import {
  eventually,
  monitorRedis,
  noRedis,
  noRedisServerBinary,
  REDIS_SKIP_REASON,
  REDIS_URL,
  redisConnection,
  startDisposableRedis,
  testPrefix,
} from '../support/redis';
import { loggedLines } from '../support/setup';
import { SHIPSTATION_ENV, useShippingProviders } from '../support/shipstation';

const ctx = useShippingProviders();
const woo = () => ctx.providers.woo;
const everything = { fits: () => true };
/** A failed order read is retried once (docs/contract.md "Time bounds and retries"): a read fails for good after two. */
const READ_ATTEMPTS = 2;

beforeEach(() => {
  useTestEnv({ CRON_SECRET: TEST_CRON_SECRET, ...SHIPSTATION_ENV });
});

function ship(body: Record<string, unknown>) {
  return POST(postJson('/api/shipping/webhook', body, { origin: null }));
}

async function retry(authorization: string | null = `Bearer ${TEST_CRON_SECRET}`) {
  const headers: Record<string, string> = {};
  if (authorization !== null) headers.authorization = authorization;
  const response = await GET(new Request('http://localhost:3000/api/cron/retry-shipping', { headers }));
  return { status: response.status, body: await response.json() };
}

describe('cron protection', () => {
  it('answers 401 without the bearer token and replays nothing', async () => {
    woo().seed({ id: 400, status: 'processing' });
    ctx.providers.failStore('GET', /\/orders\/400$/, 503, 'internal_server_error', READ_ATTEMPTS);
    await ship({ resource_type: 'SHIP_NOTIFY', order_number: '400' });
    const before = ctx.providers.calls.length;

    expect(await retry(null)).toEqual({ status: 401, body: { error: 'Unauthorized' } });
    expect(await retry('Bearer not-the-secret-0123456789')).toEqual({ status: 401, body: { error: 'Unauthorized' } });
    expect(ctx.providers.calls.length).toBe(before);
    expect((await getServices().shippingReplay.counts()).waiting).toBe(1);
  });

  it('refuses to run when CRON_SECRET is unset', async () => {
    useTestEnv({ CRON_SECRET: undefined });
    expect(await retry()).toEqual({ status: 401, body: { error: 'Unauthorized' } });
  });
});

describe('shipping replay', () => {
  it('replays a shipping update that failed at the store: the webhook answered 200, the replay writes it', async () => {
    woo().seed({ id: 401, status: 'processing' });
    ctx.providers.failStore('PUT', /\/orders\/401$/, 503, 'internal_server_error');

    const response = await ship({ resource_type: 'SHIP_NOTIFY', order_number: '401', tracking_number: '1ZREPLAY', carrier: 'UPS' });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ received: true });
    expect(woo().get(401).status).toBe('processing');
    expect(loggedLines()).toContainEqual(expect.objectContaining({ event: 'shipping.replay_queued', orderId: 401, failure: 'store:unavailable' }));

    const { status, body } = await retry();

    expect(status).toBe(200);
    expect(body).toMatchObject({ checked: 1, applied: 1, skipped: 0, retrying: 0, parkedNow: [], parkedTotal: 0, waiting: 0, complete: true });
    const order = woo().get(401);
    expect(order.status).toBe('shipped');
    expect(order.meta_data).toContainEqual(expect.objectContaining({ key: '_tracking_number', value: '1ZREPLAY' }));
    // Done: the next run has nothing to do.
    expect((await retry()).body).toMatchObject({ checked: 0, waiting: 0 });
  });

  it('queues an order fetch that timed out or failed with 5xx, but not one the store says does not exist', async () => {
    woo().seed({ id: 402, status: 'processing' });
    ctx.providers.failStore('GET', /\/orders\/402$/, 502, 'bad_gateway', READ_ATTEMPTS);
    await ship({ resource_type: 'SHIP_NOTIFY', order_number: '402' });
    await ship({ resource_type: 'SHIP_NOTIFY', order_number: '99402' });
    expect((await getServices().shippingReplay.counts()).waiting).toBe(1);

    expect((await retry()).body).toMatchObject({ checked: 1, applied: 1 });
    expect(woo().get(402).status).toBe('shipped');
  });

  it('does not write twice an order shipped meanwhile: the replay goes through the status gate', async () => {
    woo().seed({ id: 403, status: 'processing' });
    ctx.providers.failStore('PUT', /\/orders\/403$/, 500, 'internal_server_error');
    await ship({ resource_type: 'SHIP_NOTIFY', order_number: '403', tracking_number: 'FIRST' });
    // Another delivery of the same shipment succeeds before the replay runs.
    await ship({ resource_type: 'SHIP_NOTIFY', order_number: '403', tracking_number: 'FIRST' });
    expect(woo().get(403).status).toBe('shipped');
    const updates = ctx.providers.orderUpdates(403).length;

    const { body } = await retry();

    expect(body).toMatchObject({ checked: 1, applied: 0, skipped: 1, waiting: 0 });
    expect(ctx.providers.orderUpdates(403)).toHaveLength(updates);
  });

  it('parks an update after 10 failed attempts, reports and logs it, and keeps it', async () => {
    woo().seed({ id: 404, status: 'processing' });
    ctx.providers.failStore('GET', /\/orders\/404$/, 503, 'internal_server_error', MAX_REPLAY_ATTEMPTS * READ_ATTEMPTS);
    await ship({ resource_type: 'SHIP_NOTIFY', order_number: '404' });

    let now = Date.now();
    const services = getServices();
    // The webhook's attempt was the first; eight replays fail and stay queued.
    for (let attempt = 2; attempt < MAX_REPLAY_ATTEMPTS; attempt += 1) {
      now += nextAttemptDelayMs(attempt - 1);
      const summary = await replayShipping(services, everything, () => now);
      expect(summary).toMatchObject({ checked: 1, retrying: 1, parkedNow: [], waiting: 1 });
      // Not due again before its delay.
      expect(await replayShipping(services, everything, () => now + nextAttemptDelayMs(attempt) - 1)).toMatchObject({ checked: 0 });
    }
    now += nextAttemptDelayMs(MAX_REPLAY_ATTEMPTS - 1);
    const tenth = await replayShipping(services, everything, () => now);

    expect(tenth).toMatchObject({ checked: 1, retrying: 0, waiting: 0, parkedTotal: 1 });
    expect(tenth.parkedNow).toEqual([expect.objectContaining({ orderId: 404, attempts: 10, lastFailure: 'store:unavailable' })]);
    expect(loggedLines()).toContainEqual(
      expect.objectContaining({ event: 'shipping.replay_parked', level: 'error', orderId: 404, attempts: 10 }),
    );
    expect(woo().get(404).status).toBe('processing');
    // Kept and reported by every later run, never dropped, never retried by itself.
    const { body } = await retry();
    expect(body).toMatchObject({ checked: 0, parkedTotal: 1, parked: [expect.objectContaining({ orderId: 404 })] });
  });

  it('replays a ShipStation batch that could not be read, shipment by shipment', async () => {
    woo().seed({ id: 405, status: 'processing' });
    woo().seed({ id: 406, status: 'awaiting_shipment' });
    const batch = [
      { orderNumber: '405', trackingNumber: 'T405', carrierCode: 'ups', shipDate: '2026-05-01' },
      { orderNumber: '406', trackingNumber: 'T406', carrierCode: 'usps', shipDate: '2026-05-01' },
    ];
    const resourceUrl = ctx.shipStation.addBatch('4050', batch);
    ctx.shipStation.answerNext({ status: 503 }, { status: 503 }, { status: 503 });

    const response = await ship({ resource_type: 'SHIP_NOTIFY', resource_url: resourceUrl });
    expect(response.status).toBe(200);
    expect(woo().get(405).status).toBe('processing');
    expect(loggedLines()).toContainEqual(expect.objectContaining({ event: 'shipping.replay_queued', kind: 'resource', failure: 'shipstation:unavailable' }));
    // ShipStation is back.
    ctx.shipStation.reset();
    ctx.shipStation.addBatch('4050', batch);

    const { body } = await retry();

    expect(body).toMatchObject({ applied: 2, waiting: 0, complete: true });
    expect([woo().get(405).status, woo().get(406).status]).toEqual(['shipped', 'shipped']);
  });

  it('tries a shipment once per run: one read from a batch that fails at the store waits for the next run', async () => {
    woo().seed({ id: 410, status: 'processing' });
    const batch = [{ orderNumber: '410', trackingNumber: 'T410', carrierCode: 'ups', shipDate: '2026-05-01' }];
    const resourceUrl = ctx.shipStation.addBatch('4100', batch);
    ctx.shipStation.answerNext({ status: 503 }, { status: 503 }, { status: 503 });
    await ship({ resource_type: 'SHIP_NOTIFY', resource_url: resourceUrl });
    ctx.shipStation.reset();
    ctx.shipStation.addBatch('4100', batch);
    // The batch is read in the run, but the store is down for its shipment (both attempts of each read).
    ctx.providers.failStore('GET', /\/orders\/410$/, 503, 'internal_server_error', 4 * READ_ATTEMPTS);

    const { body } = await retry();

    expect(body).toMatchObject({ checked: 2, applied: 0, retrying: 1, waiting: 1 });
    expect(ctx.providers.callsTo('store', 'GET', /\/orders\/410$/)).toHaveLength(READ_ATTEMPTS);
  });

  it('queues a batch ShipStation refused with 401 (credentials being rotated), but not one from a refused URL', async () => {
    woo().seed({ id: 409, status: 'processing' });
    const batch = [{ orderNumber: '409', trackingNumber: 'T409', carrierCode: 'ups', shipDate: '2026-05-01' }];
    const resourceUrl = ctx.shipStation.addBatch('4090', batch);
    ctx.shipStation.answerNext({ status: 401 }, { status: 401 }, { status: 401 });
    await ship({ resource_type: 'SHIP_NOTIFY', resource_url: resourceUrl });
    await ship({ resource_type: 'SHIP_NOTIFY', resource_url: 'https://evil.example/shipments?batchId=1' });
    expect((await getServices().shippingReplay.counts()).waiting).toBe(1);
    ctx.shipStation.reset();
    ctx.shipStation.addBatch('4090', batch);

    expect((await retry()).body).toMatchObject({ applied: 1, waiting: 0 });
    expect(woo().get(409).status).toBe('shipped');
  });

  it.each([404, 410])('does not queue a batch ShipStation says does not exist (HTTP %i): no later read can find it', async (status) => {
    woo().seed({ id: 411, status: 'processing' });
    const resourceUrl = ctx.shipStation.addBatch(`411${status}`, [{ orderNumber: '411', trackingNumber: 'T411', carrierCode: 'ups', shipDate: '2026-05-01' }]);
    ctx.shipStation.answerNext({ status });

    await ship({ resource_type: 'SHIP_NOTIFY', resource_url: resourceUrl });

    expect(loggedLines()).toContainEqual(expect.objectContaining({ event: 'shipping.resource_read_failed', failure: 'rejected', status }));
    expect((await getServices().shippingReplay.counts()).waiting).toBe(0);
    expect(woo().get(411).status).toBe('processing');
  });

  it('stops before its time is up and leaves the rest queued', async () => {
    for (const id of [407, 408]) {
      woo().seed({ id, status: 'processing' });
      ctx.providers.failStore('GET', new RegExp(`/orders/${id}$`), 503, 'internal_server_error', READ_ATTEMPTS);
      await ship({ resource_type: 'SHIP_NOTIFY', order_number: String(id) });
    }
    let room = 1;
    const summary = await replayShipping(getServices(), { fits: () => room-- > 0 });
    expect(summary).toMatchObject({ checked: 1, applied: 1, waiting: 1, complete: false });
    expect((await retry()).body).toMatchObject({ checked: 1, applied: 1, waiting: 0 });
  });
});

describe.skipIf(noRedis)(`shipping replay with the queue in Redis${noRedis ? ` (skipped: ${REDIS_SKIP_REASON})` : ''}`, () => {
  afterEach(() => resetServices());

  it('the webhook of one instance queues the update in Redis; the cron on a new instance replays it', async () => {
    const prefix = testPrefix('cron-replay');
    useTestEnv({ CRON_SECRET: TEST_CRON_SECRET, ...SHIPSTATION_ENV, REDIS_URL, REDIS_KEY_PREFIX: prefix });
    woo().seed({ id: 421, status: 'processing' });
    ctx.providers.failStore('PUT', /\/orders\/421$/, 503, 'internal_server_error');

    expect((await ship({ resource_type: 'SHIP_NOTIFY', order_number: '421', tracking_number: '1ZREDIS', carrier: 'UPS' })).status).toBe(200);
    // In Redis, as another instance sees it.
    const seen = new RedisShippingReplayQueue(redisConnection(), { prefix });
    expect(await seen.counts()).toEqual({ waiting: 1, parked: 0 });

    // A new instance (new connection, empty memory) runs the cron.
    resetServices();
    useTestEnv({ CRON_SECRET: TEST_CRON_SECRET, ...SHIPSTATION_ENV, REDIS_URL, REDIS_KEY_PREFIX: prefix });
    const { status, body } = await retry();
    expect(status).toBe(200);
    expect(body).toMatchObject({ checked: 1, applied: 1, retrying: 0, parkedTotal: 0, waiting: 0, complete: true });
    expect(woo().get(421).status).toBe('shipped');
    expect(await seen.counts()).toEqual({ waiting: 0, parked: 0 });
  });

  it.skipIf(noRedisServerBinary)('round trips to Redis: 3 per replay run, 4 per shipment replayed, 1 more for the webhook that queues it', async () => {
    const server = await startDisposableRedis();
    useTestEnv({ CRON_SECRET: TEST_CRON_SECRET, ...SHIPSTATION_ENV, REDIS_URL: server.url, REDIS_KEY_PREFIX: testPrefix('cron-trips') });
    // Round trips seen by MONITOR: a MULTI block is one (its EXEC), a script one (EVALSHA).
    const monitor = await monitorRedis(server.url);
    const measure = async (run: () => Promise<unknown>) => (await monitor.commandsDuring(run)).length;
    // Warm up: the connection's handshake and the first load of each script are not per run.
    woo().seed({ id: 423, status: 'processing' });
    woo().seed({ id: 424, status: 'processing' });
    await ship({ resource_type: 'SHIP_NOTIFY', order_number: '423' });
    expect((await retry()).body).toMatchObject({ checked: 0 });

    expect(await measure(async () => expect((await retry()).body).toMatchObject({ checked: 0 }))).toBe(3);

    ctx.providers.failStore('PUT', /\/orders\/424$/, 503, 'internal_server_error');
    // The webhook's 2 (entry: rate limit, lock and the shipped-status memory; leave) and the queue's 1.
    expect(await measure(async () => expect((await ship({ resource_type: 'SHIP_NOTIFY', order_number: '424' })).status).toBe(200))).toBe(3);
    // Take, lock (with the shipped-status memory), unlock, remove; then the run's 3.
    expect(await measure(async () => expect((await retry()).body).toMatchObject({ checked: 1, applied: 1, waiting: 0 }))).toBe(4 + 3);
    await monitor.close();
  });

  it.skipIf(noRedisServerBinary)('Redis down: the webhook still answers 200 and keeps the update; the cron run fails (500) instead of calling the queue empty', async () => {
    const server = await startDisposableRedis();
    useTestEnv({ CRON_SECRET: TEST_CRON_SECRET, ...SHIPSTATION_ENV, REDIS_URL: server.url, REDIS_KEY_PREFIX: testPrefix('cron-outage') });
    await server.stop();

    // Nothing queued: the run cannot read the shared queue and says so.
    expect(await retry()).toEqual({ status: 500, body: { error: 'Internal server error' } });
    expect(loggedLines()).toContainEqual(expect.objectContaining({ event: 'request', status: 500, error: 'shared_state_unavailable' }));

    woo().seed({ id: 422, status: 'processing' });
    // Its lock cannot be shared while Redis is down, so the shipment is written through the companion plugin's merge.
    ctx.providers.failStore('POST', /\/orders\/422\/shipment-packages$/, 503, 'internal_server_error');
    const response = await ship({ resource_type: 'SHIP_NOTIFY', order_number: '422', tracking_number: '1ZKEPT', carrier: 'UPS' });
    expect(response.status).toBe(200);
    expect(loggedLines()).toContainEqual(expect.objectContaining({ event: 'shipping.replay_kept_in_memory', level: 'error', orderId: 422 }));

    // Redis is back (empty: a restart without persistence); this instance's next run hands the update over and applies it.
    await server.restart();
    const connection = getRedisConnection(getServices().config)!;
    await eventually(() => connection.run('ping', (redis) => redis.ping()).then(() => true, () => false));
    const { status, body } = await retry();
    expect(status).toBe(200);
    expect(body).toMatchObject({ checked: 1, applied: 1, waiting: 0 });
    expect(woo().get(422).status).toBe('shipped');
  });
});
