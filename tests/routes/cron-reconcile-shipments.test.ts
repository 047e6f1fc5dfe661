/**
 * Shipment reconciliation: GET /api/cron/reconcile-shipments reads ShipStation's
 * shipments of the window (List Shipments, page by page) and applies each
 * through the webhook's markOrderShipped, so a shipment lost with the replay
 * queue (Redis restarted empty) still reaches its order, once; one already on
 * its order writes nothing. Bounded by the run's budget and ShipStation's rate
 * budget, resuming from a cursor.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { GET } from '@/app/api/cron/reconcile-shipments/route';
import { GET as RETRY } from '@/app/api/cron/retry-shipping/route';
import { POST } from '@/app/api/shipping/webhook/route';
import { worstCase } from '@/lib/cron/budget';
import type { Budget } from '@/lib/cron/budget';
import { reconcileShipments, SHIPMENT_RECONCILE_NOT_CONFIGURED } from '@/lib/cron/reconcile-shipments';
import { getServices, resetServices, type Services } from '@/lib/services';
import { pageWorstCaseMs } from '@/lib/shipping/shipstation';
import { TEST_CRON_SECRET, useTestEnv } from '../support/env';
import { postJson } from '../support/requests';
import { eventually, noRedis, noRedisServerBinary, REDIS_SKIP_REASON, startDisposableRedis, testPrefix, type DisposableRedis } from '../support/redis';
import { loggedLines } from '../support/setup';
import { SHIPSTATION_ENV, useShippingProviders, type StandInShipment } from '../support/shipstation';

const ctx = useShippingProviders();
const woo = () => ctx.providers.woo;
const everything: Budget = { fits: () => true };
const TIMEOUT_MS = 2000;

function useEnv(overrides: Record<string, string | undefined> = {}): void {
  useTestEnv({ CRON_SECRET: TEST_CRON_SECRET, ...SHIPSTATION_ENV, ...overrides });
}

beforeEach(() => useEnv());
afterEach(() => {
  ctx.providers.storeFaults.clear();
  vi.useRealTimers();
});

/** ShipStation's date format (no offset), `hoursAgo` before now. */
function created(hoursAgo: number): string {
  return new Date(Date.now() - hoursAgo * 3_600_000).toISOString().replace(/\.(\d{3})Z$/, '.$10000');
}

function shipment(orderId: number, extra: Partial<StandInShipment> = {}): StandInShipment {
  return { orderNumber: String(orderId), trackingNumber: `1Z${orderId}`, carrierCode: 'ups', shipDate: '2026-05-01', createDate: created(1), ...extra };
}

async function reconcile(authorization: string | null = `Bearer ${TEST_CRON_SECRET}`) {
  const headers: Record<string, string> = {};
  if (authorization !== null) headers.authorization = authorization;
  const response = await GET(new Request('http://localhost:3000/api/cron/reconcile-shipments', { headers }));
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

async function retry() {
  const response = await RETRY(new Request('http://localhost:3000/api/cron/retry-shipping', { headers: { authorization: `Bearer ${TEST_CRON_SECRET}` } }));
  return (await response.json()) as Record<string, unknown>;
}

function ship(body: Record<string, unknown>) {
  return POST(postJson('/api/shipping/webhook', body, { origin: null }));
}

/** Shipped once: the status, and each write's appended tracking number exactly once. */
function expectShippedOnce(orderId: number) {
  const order = woo().get(orderId);
  expect(order.status).toBe('shipped');
  expect(order.meta_data.filter((m) => m.key === '_tracking_number')).toEqual([expect.objectContaining({ value: `1Z${orderId}` })]);
  expect(order.customer_note).toContain(`Tracking Number: 1Z${orderId}`);
}

const listCalls = () => ctx.shipStation.calls.map((call) => new URL(call.url)).filter((url) => !url.searchParams.has('batchId'));
const pagesRequested = () => listCalls().map((url) => Number(url.searchParams.get('page')));

/** A budget with room for every page and for `shipments` more shipments. */
function budgetFor(shipments: number): Budget {
  let left = shipments;
  return { fits: (ms) => (ms === pageWorstCaseMs(TIMEOUT_MS) ? true : ms === worstCase.shipment(TIMEOUT_MS) ? left-- > 0 : false) };
}

describe('cron protection and configuration', () => {
  it('answers 401 without the bearer token, and reads nothing', async () => {
    expect(await reconcile(null)).toEqual({ status: 401, body: { error: 'Unauthorized' } });
    expect(ctx.outgoing).toEqual([]);
  });

  it('answers 503 naming the settings when the ShipStation credentials are not set, and reads nothing', async () => {
    useEnv({ SHIPSTATION_API_KEY: undefined, SHIPSTATION_API_SECRET: undefined });
    expect(await reconcile()).toEqual({ status: 503, body: { error: SHIPMENT_RECONCILE_NOT_CONFIGURED } });
    expect(ctx.outgoing).toEqual([]);
  });
});

describe('shipment reconciliation', () => {
  it('applies a shipment the webhook never wrote, once; the next pass writes nothing', async () => {
    woo().seed({ id: 901, status: 'processing' });
    ctx.shipStation.addShipments([shipment(901)]);

    const { status, body } = await reconcile();

    expect(status).toBe(200);
    expect(body).toMatchObject({ checked: 1, applied: 1, skipped: 0, queued: 0, pages: 1, complete: true, resumed: false, windowHours: 72 });
    expectShippedOnce(901);
    expect(loggedLines()).toContainEqual(expect.objectContaining({ event: 'shipping.reconcile_applied', orderId: 901, outcome: 'shipped' }));
    expect((await reconcile()).body).toMatchObject({ checked: 1, applied: 0, skipped: 1, complete: true });
    expect(ctx.providers.orderUpdates(901)).toHaveLength(1);
  });

  it('writes nothing for a shipment the webhook already applied', async () => {
    woo().seed({ id: 902, status: 'processing' });
    ctx.shipStation.addShipments([shipment(902)]);
    const batch = ctx.shipStation.addBatch('b902', [shipment(902)]);
    expect((await ship({ resource_type: 'SHIP_NOTIFY', resource_url: batch })).status).toBe(200);
    expectShippedOnce(902);

    expect((await reconcile()).body).toMatchObject({ checked: 1, applied: 0, skipped: 1, queued: 0, complete: true });

    expect(ctx.providers.orderUpdates(902)).toHaveLength(1);
    expectShippedOnce(902);
  });

  it('asks ShipStation for the window, oldest ship date first, and reads every page once; voided shipments are noted, not shipped', async () => {
    ctx.shipStation.pageSize = 2;
    const ids = [911, 912, 913, 914, 915];
    for (const id of [...ids, 916]) woo().seed({ id, status: 'processing' });
    ctx.shipStation.addShipments([...ids.map((id) => shipment(id)), shipment(916, { voided: true })]);

    const summary = await reconcileShipments(getServices(), everything);

    expect(summary).toMatchObject({ checked: 6, applied: 5, pages: 3, complete: true });
    for (const id of ids) expectShippedOnce(id);
    expect(woo().get(916).status).toBe('processing');
    expect(pagesRequested()).toEqual([1, 2, 3]);
    const query = Object.fromEntries(listCalls()[0]!.searchParams);
    expect(query).toMatchObject({ sortBy: 'ShipDate', sortDir: 'ASC', pageSize: '100', page: '1' });
    const hours = (Date.parse(query.createDateEnd!) - Date.parse(query.createDateStart!)) / 3_600_000;
    expect(hours).toBe(72);
  });

  it('looks back SHIPMENT_RECONCILE_WINDOW_HOURS only', async () => {
    useEnv({ SHIPMENT_RECONCILE_WINDOW_HOURS: '2' });
    woo().seed({ id: 921, status: 'processing' });
    woo().seed({ id: 922, status: 'processing' });
    ctx.shipStation.addShipments([shipment(921, { createDate: created(1) }), shipment(922, { createDate: created(3) })]);

    expect((await reconcile()).body).toMatchObject({ checked: 1, applied: 1, windowHours: 2 });
    expectShippedOnce(921);
    expect(woo().get(922).status).toBe('processing');
  });

  it('queues a shipment the store does not take now, and the replay applies it once', async () => {
    woo().seed({ id: 925, status: 'processing' });
    ctx.shipStation.addShipments([shipment(925)]);
    ctx.providers.storeFaults.inject({ kind: 'status_502', method: 'PUT', path: /\/orders\/925$/ });

    expect((await reconcile()).body).toMatchObject({ checked: 1, applied: 0, queued: 1, complete: true });
    expect(woo().get(925).status).toBe('processing');
    ctx.providers.storeFaults.clear();

    expect(await retry()).toMatchObject({ checked: 1, applied: 1, waiting: 0 });
    expectShippedOnce(925);
  });

  it('stops before its time is up with a cursor; the next run resumes at the shipment after the last one done', async () => {
    ctx.shipStation.pageSize = 2;
    const ids = [931, 932, 933, 934, 935];
    for (const id of ids) woo().seed({ id, status: 'processing' });
    ctx.shipStation.addShipments(ids.map((id) => shipment(id)));

    const first = await reconcileShipments(getServices(), budgetFor(3));
    expect(first).toMatchObject({ checked: 3, applied: 3, complete: false, resumed: false, stoppedFor: 'time' });
    for (const id of [931, 932, 933]) expectShippedOnce(id);
    expect(woo().get(934).status).toBe('processing');

    // Created after the pass began: outside its fixed window, found by the next pass.
    woo().seed({ id: 936, status: 'processing' });
    ctx.shipStation.addShipments([shipment(936, { createDate: created(-1 / 60) })]);

    const second = await reconcileShipments(getServices(), budgetFor(10));
    expect(second).toMatchObject({ checked: 2, applied: 2, skipped: 0, complete: true, resumed: true });
    for (const id of ids) expectShippedOnce(id);
    expect(woo().get(936).status).toBe('processing');
    // Page 2 again (its first shipment done, not retried), then page 3.
    expect(pagesRequested()).toEqual([1, 2, 2, 3]);

    const third = await reconcileShipments(getServices(), budgetFor(10), () => Date.now() + 120_000);
    expect(third).toMatchObject({ checked: 6, applied: 1, skipped: 5, complete: true, resumed: false });
    expectShippedOnce(936);
    for (const id of ids) expect(ctx.providers.orderUpdates(id)).toHaveLength(1);
  });

  it("stays within ShipStation's rate budget: with the window spent it stops without asking, and resumes after the reset", async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    ctx.shipStation.pageSize = 2;
    // One request left in ShipStation's window; the reset is 42 s away, far past the upstream timeout.
    ctx.shipStation.remaining = 1;
    const ids = [941, 942, 943, 944];
    for (const id of ids) woo().seed({ id, status: 'processing' });
    ctx.shipStation.addShipments(ids.map((id) => shipment(id)));

    const first = await reconcileShipments(getServices(), everything);

    expect(first).toMatchObject({ checked: 2, applied: 2, pages: 1, complete: false, stoppedFor: 'shipstation:rate_limited' });
    // Never a request ShipStation would have answered 429.
    expect(ctx.shipStation.calls).toHaveLength(1);
    expect(woo().get(943).status).toBe('processing');

    vi.setSystemTime(Date.now() + 43_000);
    ctx.shipStation.remaining = 40;
    const second = await reconcileShipments(getServices(), everything);

    expect(second).toMatchObject({ checked: 2, applied: 2, pages: 1, complete: true, resumed: true });
    expect(pagesRequested()).toEqual([1, 2]);
    for (const id of ids) expectShippedOnce(id);
  });

  it('stops at a page ShipStation does not serve, and the next run reads it', async () => {
    ctx.shipStation.pageSize = 1;
    for (const id of [951, 952]) woo().seed({ id, status: 'processing' });
    ctx.shipStation.addShipments([shipment(951), shipment(952)]);
    ctx.shipStation.answerNext({ status: 302, headers: { Location: 'https://elsewhere.example/' }, page: 2 });

    expect(await reconcileShipments(getServices(), everything)).toMatchObject({ applied: 1, complete: false, stoppedFor: 'shipstation:rejected:302' });
    expect(await reconcileShipments(getServices(), everything)).toMatchObject({ applied: 1, complete: true, resumed: true });
    expectShippedOnce(951);
    expectShippedOnce(952);
  });
});

describe.skipIf(noRedis || noRedisServerBinary)(
  `with Redis${noRedis ? ` (skipped: ${REDIS_SKIP_REASON})` : noRedisServerBinary ? ' (skipped: no redis-server)' : ''}`,
  () => {
    let server: DisposableRedis;

    async function useRedis(): Promise<string> {
      server = await startDisposableRedis();
      const prefix = testPrefix('reconcile-shipments');
      useEnv({ REDIS_URL: server.url, REDIS_KEY_PREFIX: prefix });
      return prefix;
    }

    async function redisAnswers(services: Services = getServices()): Promise<void> {
      await eventually(() => services.shippingReplay.counts().then(() => true, () => false));
    }

    afterEach(() => resetServices());

    it('Redis restarted empty with a shipment queued: the replay has nothing, reconciliation applies it once', async () => {
      await useRedis();
      woo().seed({ id: 961, status: 'processing' });
      woo().seed({ id: 962, status: 'processing' });
      const both = [shipment(961), shipment(962)];
      ctx.shipStation.addShipments(both);
      // 961's write landed and its answer was lost; 962's never landed. Both are queued in Redis.
      ctx.providers.storeFaults.inject({ kind: 'status_500', method: 'PUT', path: /\/orders\/961$/, commit: 'after' });
      ctx.providers.storeFaults.inject({ kind: 'status_500', method: 'PUT', path: /\/orders\/962$/, commit: 'before' });
      expect((await ship({ resource_type: 'SHIP_NOTIFY', resource_url: ctx.shipStation.addBatch('b96', both) })).status).toBe(200);
      expect(await getServices().shippingReplay.counts()).toEqual({ waiting: 2, parked: 0 });
      ctx.providers.storeFaults.clear();

      await server.restart();
      await redisAnswers();
      expect(await retry()).toMatchObject({ checked: 0, waiting: 0 });
      expect(woo().get(962).status).toBe('processing');

      expect((await reconcile()).body).toMatchObject({ checked: 2, applied: 1, skipped: 1, queued: 0, complete: true });
      expectShippedOnce(961);
      expectShippedOnce(962);
      expect((await reconcile()).body).toMatchObject({ checked: 2, applied: 0, skipped: 2 });
      expect(ctx.providers.orderUpdates(961)).toHaveLength(1);
      expect(ctx.providers.orderUpdates(962)).toHaveLength(2);
    });

    it('a run on one instance stops with a cursor in Redis; a run on another instance resumes there', async () => {
      const prefix = await useRedis();
      ctx.shipStation.pageSize = 2;
      const ids = [971, 972, 973];
      for (const id of ids) woo().seed({ id, status: 'processing' });
      ctx.shipStation.addShipments(ids.map((id) => shipment(id)));

      expect(await reconcileShipments(getServices(), budgetFor(1))).toMatchObject({ checked: 1, complete: false });
      useEnv({ REDIS_URL: server.url, REDIS_KEY_PREFIX: prefix });

      expect(await reconcileShipments(getServices(), budgetFor(10))).toMatchObject({ checked: 2, applied: 2, complete: true, resumed: true });
      for (const id of ids) expectShippedOnce(id);
      expect(pagesRequested()).toEqual([1, 1, 2]);
    });
  },
);
