/**
 * Shipping facts are never lost and applied once, whatever the store or
 * ShipStation does. Every store fault (tests/support/store-faults.ts), before
 * or after the store committed the write, followed by the replay cron, leaves
 * the order shipped once: one `shipped` write, one tracking note, each tracking
 * meta key once. Only an answer that settles the shipment (the order does not
 * exist, the store refuses the update itself) is not queued. A ShipStation
 * batch is read to its last page; failed pages and pages the request has no
 * time for are queued, never dropped. With Redis: stopped mid-request,
 * restarted empty, and two instances while it is down.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { GET } from '@/app/api/cron/retry-shipping/route';
import { POST } from '@/app/api/shipping/webhook/route';
import { replayShipping } from '@/lib/cron/retry-shipping';
import { getServices, resetServices, type Services } from '@/lib/services';
import { handleShippingNotification } from '@/lib/webhooks/shipping/handle-notification';
import { TEST_CRON_SECRET, useTestEnv } from '../support/env';
import { postJson } from '../support/requests';
import { eventually, noRedis, noRedisServerBinary, REDIS_SKIP_REASON, startDisposableRedis, testPrefix, type DisposableRedis } from '../support/redis';
import { loggedLines } from '../support/setup';
import { SHIPSTATION_BASE_URL, SHIPSTATION_ENV, useShippingProviders } from '../support/shipstation';
import { STORE_FAULT_KINDS, type StoreFaultKind } from '../support/store-faults';

const ctx = useShippingProviders();
const woo = () => ctx.providers.woo;
const faults = () => ctx.providers.storeFaults;
const everything = { fits: () => true };
const TRACKING_KEYS = ['_tracking_number', '_shipping_carrier', '_shipped_date', '_shipstation_webhook_received_at'];

/** The default test timeout (2 s); a hang is waited out at a shorter one, so those tests stay short. */
function useEnv(overrides: Record<string, string | undefined> = {}): void {
  useTestEnv({ CRON_SECRET: TEST_CRON_SECRET, ...SHIPSTATION_ENV, ...overrides });
}

function envFor(kind: StoreFaultKind): Record<string, string> {
  return kind === 'hang' ? { UPSTREAM_TIMEOUT_MS: '1000' } : {};
}

beforeEach(() => useEnv());
afterEach(() => {
  faults().clear();
  vi.useRealTimers();
});

function shipment(orderId: number, tracking = `1Z${orderId}`) {
  return { resource_type: 'SHIP_NOTIFY', order_number: String(orderId), tracking_number: tracking, carrier: 'UPS', ship_date: '2026-05-01' };
}

function ship(body: Record<string, unknown>) {
  return POST(postJson('/api/shipping/webhook', body, { origin: null }));
}

async function retry() {
  const response = await GET(new Request('http://localhost:3000/api/cron/retry-shipping', { headers: { authorization: `Bearer ${TEST_CRON_SECRET}` } }));
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

/** The order carries the shipment once: status, the tracking note, and each tracking meta key once (every write appends them). */
function expectShippedOnce(orderId: number, tracking = `1Z${orderId}`, status = 'shipped') {
  const order = woo().get(orderId);
  expect(order.status).toBe(status);
  expect(order.customer_note).toBe(`Your order has been shipped! Tracking Number: ${tracking} | Carrier: UPS | Ship Date: 2026-05-01`);
  for (const key of TRACKING_KEYS) expect(order.meta_data.filter((m) => m.key === key), key).toHaveLength(1);
  expect(order.meta_data.find((m) => m.key === '_tracking_number')?.value).toBe(tracking);
}

function queuedFailures(): unknown[] {
  return loggedLines()
    .filter((line) => line.event === 'shipping.replay_queued')
    .map((line) => line.failure);
}

describe('fault matrix: a shipment whose store write fails, then the replay cron', () => {
  const cases = STORE_FAULT_KINDS.flatMap((kind) =>
    (kind === 'refused' ? (['before'] as const) : (['before', 'after'] as const)).map((commit) => ({ kind, commit })),
  );

  it.each(cases)('$kind, $commit the write commits: queued, then shipped once', async ({ kind, commit }) => {
    useEnv(envFor(kind));
    woo().seed({ id: 801, status: 'processing' });
    faults().inject({ kind, method: 'PUT', path: /\/orders\/801$/, commit });

    const response = await ship(shipment(801));

    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ received: true });
    expect(faults().fired).toHaveLength(1);
    expect(woo().get(801).status).toBe(commit === 'after' ? 'shipped' : 'processing');
    expect(queuedFailures()).toHaveLength(1);
    faults().clear();

    const { status, body } = await retry();

    expect(status).toBe(200);
    // A write that landed with its answer lost is found shipped: done, not a failure and not a second write.
    expect(body).toMatchObject({ checked: 1, applied: commit === 'after' ? 0 : 1, skipped: commit === 'after' ? 1 : 0, retrying: 0, parkedNow: [], waiting: 0 });
    expectShippedOnce(801);
    if (commit === 'after') {
      expect(loggedLines()).toContainEqual(expect.objectContaining({ event: 'shipping.replay_settled', orderId: 801, outcome: 'already_shipped' }));
    }
    expect((await retry()).body).toMatchObject({ checked: 0, waiting: 0 });
  });

  it.each(STORE_FAULT_KINDS)('%s on every read of the order: queued, then shipped once', async (kind) => {
    useEnv(envFor(kind));
    woo().seed({ id: 802, status: 'processing' });
    faults().inject({ kind, method: 'GET', path: /\/orders\/802$/, times: Infinity });

    expect((await ship(shipment(802))).status).toBe(200);

    expect(ctx.providers.orderUpdates(802)).toHaveLength(0);
    expect(queuedFailures()).toHaveLength(1);
    faults().clear();
    expect((await retry()).body).toMatchObject({ checked: 1, applied: 1, retrying: 0, waiting: 0 });
    expectShippedOnce(802);
  });

  it.each(['reset', 'status_500', 'html_200', 'truncated_json_200'] as const)(
    '%s after the completed fallback committed: the replay finds it completed and is done',
    async (kind) => {
      woo().removeStatus('shipped');
      woo().seed({ id: 803, status: 'processing' });
      // Known already: the shipment is written straight as completed, one write.
      await getServices().shippedStatus.rememberShippedMissing();
      faults().inject({ kind, method: 'PUT', path: /\/orders\/803$/, commit: 'after' });

      expect((await ship(shipment(803))).status).toBe(200);
      expect(queuedFailures()).toHaveLength(1);
      faults().clear();

      expect((await retry()).body).toMatchObject({ checked: 1, applied: 0, skipped: 1, retrying: 0, waiting: 0 });
      expectShippedOnce(803, '1Z803', 'completed');
    },
  );

  it('the queue names each failure, with the status of a refusal: 429, 403 and a redirect are told apart', async () => {
    const kinds = ['status_429', 'status_403', 'redirect_302', 'html_200', 'reset', 'status_502'] as const;
    for (const [i, kind] of kinds.entries()) {
      woo().seed({ id: 810 + i, status: 'processing' });
      faults().inject({ kind, method: 'PUT', path: new RegExp(`/orders/${810 + i}$`) });
      await ship(shipment(810 + i));
    }
    expect(queuedFailures()).toEqual([
      'store:rejected:429',
      'store:rejected:403',
      'store:rejected:302',
      'store:bad_response',
      'store:unavailable',
      'store:unavailable',
    ]);
  });
});

describe('answers that settle a shipment are not queued', () => {
  it('an order the store does not know', async () => {
    expect((await ship(shipment(99_801))).status).toBe(200);
    expect(queuedFailures()).toEqual([]);
    expect((await getServices().shippingReplay.counts()).waiting).toBe(0);
  });

  it('a store that refuses shipped and then completed as an invalid status', async () => {
    woo().seed({ id: 804, status: 'processing' });
    ctx.providers.failStore('PUT', /\/orders\/804$/, 400, 'rest_invalid_param', 2);

    expect((await ship(shipment(804))).status).toBe(200);

    expect(ctx.providers.orderUpdates(804).map((u) => u.status)).toEqual(['shipped', 'completed']);
    expect(queuedFailures()).toEqual([]);
  });

  it('but any other refusal is queued: it may be lifted (and a refusal that stays is parked, and reported)', async () => {
    woo().seed({ id: 805, status: 'processing' });
    ctx.providers.failStore('PUT', /\/orders\/805$/, 400, 'woocommerce_rest_cannot_edit');

    expect((await ship(shipment(805))).status).toBe(200);

    expect(queuedFailures()).toEqual(['store:rejected:400']);
    expect((await retry()).body).toMatchObject({ applied: 1, waiting: 0 });
    expectShippedOnce(805);
  });
});

describe('a ShipStation batch that could not be read is queued, then applied once', () => {
  const batch = (orderId: number) => [{ orderNumber: String(orderId), trackingNumber: `1Z${orderId}`, carrierCode: 'UPS', shipDate: '2026-05-01' }];

  it.each([
    ['429 twice (rate limited)', [{ status: 429, headers: { 'X-Rate-Limit-Reset': '0' } }, { status: 429, headers: { 'X-Rate-Limit-Reset': '0' } }], 'shipstation:rate_limited'],
    ['401 (credentials being rotated)', [{ status: 401 }], 'shipstation:rejected:401'],
    ['403', [{ status: 403 }], 'shipstation:rejected:403'],
    ['a redirect', [{ status: 302, headers: { Location: 'https://ssapi.shipstation.com/login' } }], 'shipstation:rejected:302'],
    ['500 twice', [{ status: 500 }, { status: 500 }], 'shipstation:unavailable'],
    ['200 with an HTML page', [{ status: 200, text: '<html><body>Maintenance</body></html>' }], 'shipstation:bad_response'],
    ['200 with JSON cut short', [{ status: 200, text: '{"shipments": [{"orderNumber": "8', headers: { 'Content-Type': 'application/json' } }], 'shipstation:bad_response'],
    ['200 that is not a shipments list', [{ status: 200, body: { orders: [] } }], 'shipstation:bad_response'],
  ])('%s', async (_label, answers, failure) => {
    woo().seed({ id: 820, status: 'processing' });
    const resourceUrl = ctx.shipStation.addBatch('8200', batch(820));
    ctx.shipStation.answerNext(...answers);

    expect((await ship({ resource_type: 'SHIP_NOTIFY', resource_url: resourceUrl })).status).toBe(200);

    expect(woo().get(820).status).toBe('processing');
    expect(queuedFailures()).toEqual([failure]);
    expect((await retry()).body).toMatchObject({ applied: 1, retrying: 0, waiting: 0 });
    expectShippedOnce(820);
  });

  it('but not a batch ShipStation says does not exist (404), nor a URL the service will not read', async () => {
    ctx.shipStation.answerNext({ status: 404 });
    await ship({ resource_type: 'SHIP_NOTIFY', resource_url: `${SHIPSTATION_BASE_URL}/shipments?batchId=8210` });
    await ship({ resource_type: 'SHIP_NOTIFY', resource_url: 'https://attacker.example/shipments?batchId=8210' });

    expect(queuedFailures()).toEqual([]);
    expect((await getServices().shippingReplay.counts()).waiting).toBe(0);
  });
});

describe('a ShipStation batch is read to its last page', () => {
  const PAGES = 25;
  const ids = Array.from({ length: PAGES }, (_, i) => 830 + i);

  function seedBatch(): string {
    ctx.shipStation.pageSize = 1;
    for (const id of ids) woo().seed({ id, status: 'processing' });
    return ctx.shipStation.addBatch(
      '8300',
      ids.map((id) => ({ orderNumber: String(id), trackingNumber: `1Z${id}`, carrierCode: 'UPS', shipDate: '2026-05-01' })),
    );
  }

  const pagesRead = () => ctx.shipStation.calls.map((call) => Number(new URL(call.url).searchParams.get('page') ?? '1'));

  it('the webhook reads 10 pages and queues the rest; the replay reads the rest: every page once, every shipment applied once', async () => {
    const resourceUrl = seedBatch();

    expect((await ship({ resource_type: 'SHIP_NOTIFY', resource_url: resourceUrl })).status).toBe(200);

    expect(pagesRead()).toEqual(ids.slice(0, 10).map((_, i) => i + 1));
    expect(ids.filter((id) => woo().get(id).status === 'shipped')).toEqual(ids.slice(0, 10));
    expect(queuedFailures()).toEqual(['shipstation:pages_per_read']);

    const { body } = await retry();

    expect(body).toMatchObject({ applied: PAGES - 10, retrying: 0, waiting: 0, complete: true });
    expect(pagesRead()).toEqual(ids.map((_, i) => i + 1));
    for (const id of ids) expectShippedOnce(id);
  });

  it('a page that fails is queued from that page on: the pages before it are applied now, none is read twice', async () => {
    const resourceUrl = seedBatch();
    ctx.shipStation.answerNext({ status: 403, page: 4 });

    await ship({ resource_type: 'SHIP_NOTIFY', resource_url: resourceUrl });

    expect(ids.filter((id) => woo().get(id).status === 'shipped')).toEqual(ids.slice(0, 3));
    expect(queuedFailures()).toEqual(['shipstation:rejected:403']);
    expect((await retry()).body).toMatchObject({ retrying: 0, waiting: 0, complete: true });
    expect(pagesRead()).toEqual([1, 2, 3, 4, ...ids.slice(3).map((_, i) => i + 4)]);
    for (const id of ids) expectShippedOnce(id);
  });

  it('pages the request has no time for are queued, not dropped', async () => {
    const resourceUrl = seedBatch();
    // The clock moves only when told: reading page 1 takes 2.5 s of the request's 6 s, which leaves
    // less than a page's worst case (twice the 2 s timeout).
    vi.useFakeTimers({ toFake: ['Date'] });
    ctx.shipStation.beforeAnswer = () => vi.setSystemTime(Date.now() + 2_500);

    expect((await ship({ resource_type: 'SHIP_NOTIFY', resource_url: resourceUrl })).status).toBe(200);

    expect(pagesRead()).toEqual([1]);
    expect(woo().get(ids[0]!).status).toBe('shipped');
    expect(queuedFailures()).toEqual(['shipstation:no_time']);
    ctx.shipStation.beforeAnswer = undefined;
    vi.useRealTimers();

    // Due when the fake clock said; the replay runs a minute later.
    const summary = await replayShipping(getServices(), everything, () => Date.now() + 60_000);

    expect(summary).toMatchObject({ retrying: 0, waiting: 0, complete: true });
    expect(pagesRead()).toEqual(ids.map((_, i) => i + 1));
    for (const id of ids) expectShippedOnce(id);
  });

  it('shipments the request has no time left for are queued untried, not dropped', async () => {
    const few = [841, 842, 843];
    for (const id of few) woo().seed({ id, status: 'processing' });
    const resourceUrl = ctx.shipStation.addBatch(
      '8400',
      few.map((id) => ({ orderNumber: String(id), trackingNumber: `1Z${id}`, carrierCode: 'UPS', shipDate: '2026-05-01' })),
    );
    // ShipStation takes the whole request's time: nothing is left for the store.
    vi.useFakeTimers({ toFake: ['Date'] });
    ctx.shipStation.beforeAnswer = () => vi.setSystemTime(Date.now() + 6_000);

    expect((await ship({ resource_type: 'SHIP_NOTIFY', resource_url: resourceUrl })).status).toBe(200);

    expect(ctx.providers.callsTo('store')).toEqual([]);
    expect(queuedFailures()).toEqual(['no_time', 'no_time', 'no_time']);
    ctx.shipStation.beforeAnswer = undefined;
    vi.useRealTimers();

    const summary = await replayShipping(getServices(), everything, () => Date.now() + 60_000);

    expect(summary).toMatchObject({ applied: 3, retrying: 0, waiting: 0 });
    for (const id of few) expectShippedOnce(id);
  });
});

describe.skipIf(noRedis || noRedisServerBinary)(
  `with the replay queue in Redis${noRedis ? ` (skipped: ${REDIS_SKIP_REASON})` : noRedisServerBinary ? ' (skipped: no redis-server)' : ''}`,
  () => {
    let server: DisposableRedis;

    async function useRedis(overrides: Record<string, string> = {}): Promise<string> {
      server = await startDisposableRedis();
      const prefix = testPrefix('shipping-faults');
      useEnv({ REDIS_URL: server.url, REDIS_KEY_PREFIX: prefix, ...overrides });
      return prefix;
    }

    /** Until this instance's own connection reaches Redis again (it reconnects in the background, backing off). */
    async function redisAnswers(services: Services = getServices()): Promise<void> {
      await eventually(() => services.shippingReplay.counts().then(() => true, () => false));
    }

    afterEach(() => resetServices());

    it.each(['before', 'after'] as const)(
      'Redis stopped mid-request (%s the write commits), restarted empty before the replay: kept in memory, handed over, shipped once',
      async (commit) => {
        // Long enough that the store call waits for the test, not for its timeout.
        await useRedis({ UPSTREAM_TIMEOUT_MS: '5000' });
        woo().seed({ id: 850, status: 'processing' });
        faults().inject({ kind: 'hang', method: 'PUT', path: /\/orders\/850$/, commit });
        const writing = faults().hangStarted();

        const delivery = ship(shipment(850));
        // The order's lock is in Redis and the write is at the store when Redis goes away; then the answer is lost.
        await writing;
        await server.stop();
        faults().releaseHangs();
        const response = await delivery;

        expect(response.status).toBe(200);
        expect(loggedLines()).toContainEqual(expect.objectContaining({ event: 'shipping.replay_kept_in_memory', level: 'error', orderId: 850 }));
        await server.restart();
        await redisAnswers();

        const { status, body } = await retry();

        expect(status).toBe(200);
        expect(body).toMatchObject({ checked: 1, applied: commit === 'after' ? 0 : 1, retrying: 0, parkedNow: [], waiting: 0 });
        expect(loggedLines()).toContainEqual(expect.objectContaining({ event: 'shipping.replay_handed_over', orderId: 850 }));
        expectShippedOnce(850);
      },
    );

    it('Redis restarted empty after the entry reached it: nothing is applied twice, the entry is gone with Redis, a redelivery is applied once', async () => {
      await useRedis();
      woo().seed({ id: 851, status: 'processing' });
      woo().seed({ id: 852, status: 'processing' });
      // 851's write landed and its answer was lost; 852's never landed. Both are queued in Redis.
      faults().inject({ kind: 'status_500', method: 'PUT', path: /\/orders\/851$/, commit: 'after' });
      faults().inject({ kind: 'status_500', method: 'PUT', path: /\/orders\/852$/, commit: 'before' });
      await ship(shipment(851));
      await ship(shipment(852));
      expect(await getServices().shippingReplay.counts()).toEqual({ waiting: 2, parked: 0 });

      // Restarted without persistence: the queue is gone (docs/operations.md: the server must persist its data).
      await server.restart();
      await redisAnswers();
      expect((await retry()).body).toMatchObject({ checked: 0, applied: 0, waiting: 0 });

      expectShippedOnce(851);
      expect(woo().get(852).status).toBe('processing');
      // ShipStation does not redeliver (every delivery was answered 200); a notification sent again
      // (re-notified from ShipStation, or by hand) is applied once, and changes nothing where it landed.
      await ship(shipment(851));
      await ship(shipment(852));
      expectShippedOnce(851);
      expectShippedOnce(852);
    });

    it('two instances while Redis is down: each keeps what it queued, and their replays apply the shipment once', async () => {
      await useRedis();
      const a = getServices();
      // A second instance: its own memory and its own connection to the same Redis.
      useEnv({ REDIS_URL: server.url, REDIS_KEY_PREFIX: a.config.redisKeyPrefix });
      const b = getServices();
      expect(b).not.toBe(a);
      woo().seed({ id: 853, status: 'processing' });
      await server.stop();
      // The same shipment reaches both (subscribed to SHIP_NOTIFY and ITEM_SHIP_NOTIFY, say); the store fails both writes,
      // which go through the companion plugin's merge while the order's lock cannot be shared.
      faults().inject({ kind: 'reset', method: 'POST', path: /\/orders\/853\/shipment-packages$/, times: 2 });
      await handleShippingNotification(JSON.stringify(shipment(853)), a, {});
      await handleShippingNotification(JSON.stringify({ ...shipment(853), resource_type: 'ITEM_SHIP_NOTIFY' }), b, {});
      expect(loggedLines().filter((line) => line.event === 'shipping.replay_kept_in_memory')).toHaveLength(2);
      expect(woo().get(853).status).toBe('processing');

      // Each run applies what its instance kept, then fails for the shared queue it cannot read.
      await expect(replayShipping(b, everything)).rejects.toMatchObject({ kind: 'shared_state_unavailable' });
      expectShippedOnce(853);
      await expect(replayShipping(a, everything)).rejects.toMatchObject({ kind: 'shared_state_unavailable' });
      expect(loggedLines()).toContainEqual(expect.objectContaining({ event: 'shipping.already_shipped', orderId: 853 }));

      await server.restart();
      await redisAnswers(a);
      await redisAnswers(b);
      expect(await replayShipping(a, everything)).toMatchObject({ checked: 0, waiting: 0, parkedTotal: 0 });
      expect(await replayShipping(b, everything)).toMatchObject({ checked: 0, waiting: 0, parkedTotal: 0 });
      expectShippedOnce(853);
      expect(ctx.providers.callsTo('store', 'POST', /\/orders\/853\/shipment-packages$/)).toHaveLength(3);
      expect(ctx.providers.orderUpdates(853)).toHaveLength(0);
    });
  },
);
