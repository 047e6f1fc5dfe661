/**
 * The shipping crons with ShipStation V2: shipment reconciliation reads V2's labels and
 * fulfillments of the window, and the replay applies V2 batches and deliveries the webhook could
 * not, through the same code as V1's.
 */
import { http } from 'msw';
import { beforeEach, describe, expect, it } from 'vitest';
import { GET as RECONCILE } from '@/app/api/cron/reconcile-shipments/route';
import { GET as RETRY } from '@/app/api/cron/retry-shipping/route';
import { POST } from '@/app/api/shipping/webhook/route';
import { getServices } from '@/lib/services';
import { trackEvent } from '@/stand-ins/shipstation/v2';
import { TEST_CRON_SECRET, useTestEnv } from '../support/env';
import { freshIp } from '../support/requests';
import { loggedLines } from '../support/setup';
import { SHIPSTATION_ENV, SHIPSTATION_V2_BASE_URL, SHIPSTATION_V2_ENV, useShippingProviders } from '../support/shipstation';

const ctx = useShippingProviders();
const woo = () => ctx.providers.woo;
const v2 = () => ctx.shipStationV2;
const hoursAgo = (hours: number) => new Date(Date.now() - hours * 3_600_000).toISOString();

beforeEach(() => {
  useTestEnv({ CRON_SECRET: TEST_CRON_SECRET, ...SHIPSTATION_V2_ENV });
});

async function cron(route: typeof RECONCILE) {
  const response = await route(new Request('http://localhost:3000/api/cron/x', { headers: { authorization: `Bearer ${TEST_CRON_SECRET}` } }));
  return { status: response.status, body: (await response.json()) as Record<string, any> };
}

function deliver(payload: object) {
  const { body, headers } = v2().delivery(payload);
  return POST(new Request('http://localhost:3000/api/shipping/webhook', { method: 'POST', headers: { ...headers, 'x-forwarded-for': freshIp() }, body }));
}

describe('shipment reconciliation through V2', () => {
  it('applies the labels and fulfillments of the window that never reached their order, once, and skips the rest', async () => {
    for (const id of [401, 402, 403, 404]) woo().seed({ id, status: 'processing' });
    woo().seed({ id: 405, status: 'shipped' });
    v2().addLabel({ orderNumber: '401', trackingNumber: '1Z401', carrierCode: 'ups', shipDate: '2026-05-01', createdAt: hoursAgo(2) });
    v2().addLabel({ orderNumber: '402', trackingNumber: '1Z402', isReturnLabel: true, createdAt: hoursAgo(2) });
    v2().addLabel({ orderNumber: '403', trackingNumber: '1Z403', createdAt: hoursAgo(500) });
    v2().addFulfillment({ orderNumber: '404', trackingNumber: '770404', carrier: 'FedEx', createdAt: hoursAgo(1) });
    v2().addFulfillment({ orderNumber: '405', trackingNumber: '770405', createdAt: hoursAgo(1) });

    const first = await cron(RECONCILE);

    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ checked: 3, applied: 2, skipped: 1, queued: 0, complete: true });
    expect(first.body.lists).toMatchObject({ v2_labels: { checked: 1, applied: 1 }, v2_fulfillments: { checked: 2, applied: 1, skipped: 1 } });
    expect(woo().get(401).status).toBe('shipped');
    expect(woo().get(401).customer_note).toContain('Tracking Number: 1Z401 | Carrier: ups');
    expect(woo().get(404).status).toBe('shipped');
    expect(woo().get(402).status).toBe('processing');
    expect(woo().get(403).status).toBe('processing');
    const labelList = v2().calls.map((c) => new URL(c.url)).find((u) => u.pathname === '/v2/labels');
    expect(labelList?.searchParams.get('sort_dir')).toBe('asc');
    expect(labelList?.searchParams.get('created_at_start')).not.toBeNull();

    const second = await cron(RECONCILE);
    expect(second.body).toMatchObject({ applied: 0, complete: true });
    expect(woo().get(401).meta_data.filter((m) => m.key === '_tracking_number')).toHaveLength(1);
  });

  it('a list answer read for its own list: the other list beside it, even null, is not read', async () => {
    woo().seed({ id: 406, status: 'processing' });
    v2().addLabel({ orderNumber: '406', trackingNumber: '1Z406', createdAt: hoursAgo(1) });
    // The stand-in's own answers, each with the other list beside the one asked for.
    ctx.server.use(
      http.get(`${SHIPSTATION_V2_BASE_URL}/v2/:list`, async ({ request, params }) => {
        const answer = (await (await v2().handler(request)).json()) as Record<string, unknown>;
        return Response.json({ ...answer, [params.list === 'labels' ? 'fulfillments' : 'labels']: null });
      }),
    );

    const run = await cron(RECONCILE);

    expect(run.body).toMatchObject({ applied: 1, complete: true });
    expect(woo().get(406).status).toBe('shipped');
  });

  it('beside V1, each list has its own pass in the summary', async () => {
    useTestEnv({ CRON_SECRET: TEST_CRON_SECRET, ...SHIPSTATION_V2_ENV, ...SHIPSTATION_ENV });

    const run = await cron(RECONCILE);

    expect(run.status).toBe(200);
    expect(Object.keys(run.body.lists)).toEqual(['v1', 'v2_labels', 'v2_fulfillments']);
    expect(ctx.shipStation.calls).toHaveLength(1);
  });

  it('a V2 page ShipStation does not serve stops the pass with its failure, and the next run resumes from its cursor', async () => {
    woo().seed({ id: 411, status: 'processing' });
    v2().addLabel({ orderNumber: '411', trackingNumber: '1Z411', createdAt: hoursAgo(1) });
    v2().failNext(503, 503);

    const stopped = await cron(RECONCILE);
    expect(stopped.body).toMatchObject({ complete: false, stoppedFor: 'shipstation:unavailable' });
    expect(woo().get(411).status).toBe('processing');
    expect(await getServices().shipmentCursorsV2.labels.load()).toMatchObject({ page: 1, done: 0 });

    const resumed = await cron(RECONCILE);
    expect(resumed.body).toMatchObject({ complete: true, resumed: true, applied: 1 });
    expect(woo().get(411).status).toBe('shipped');
  });

  it('a label whose shipment cannot be read stops the pass before it, and the next run applies it', async () => {
    woo().seed({ id: 412, status: 'processing' });
    v2().addLabel({ orderNumber: '412', trackingNumber: '1Z412', createdAt: hoursAgo(1) });
    v2().failPath(/^\/v2\/shipments\//, 503, 503);

    const stopped = await cron(RECONCILE);
    expect(stopped.body).toMatchObject({ complete: false, stoppedFor: 'shipstation:unavailable', checked: 0 });
    expect(woo().get(412).status).toBe('processing');

    const resumed = await cron(RECONCILE);
    expect(resumed.body).toMatchObject({ complete: true, applied: 1 });
    expect(woo().get(412).status).toBe('shipped');
  });
});

describe('shipping replay through V2', () => {
  it('a V2 batch ShipStation did not serve is queued by the webhook and applied by the replay', async () => {
    woo().seed({ id: 421, status: 'processing' });
    v2().addFulfillment({ orderNumber: '421', trackingNumber: '770421' });
    v2().failNext(503, 503);

    expect((await deliver({ resource_url: `${SHIPSTATION_V2_BASE_URL}/v2/fulfillments`, resource_type: 'FULFILLMENT_SHIPPED_V2' })).status).toBe(200);
    expect(woo().get(421).status).toBe('processing');
    expect(loggedLines()).toContainEqual(expect.objectContaining({ event: 'shipping.replay_queued', kind: 'resource', failure: 'shipstation:unavailable' }));

    const run = await cron(RETRY);

    expect(run.body).toMatchObject({ applied: 1, waiting: 0 });
    expect(woo().get(421).status).toBe('shipped');
  });

  it('a delivery whose label could not be read, or whose store write failed, is recorded by the replay', async () => {
    woo().seed({ id: 422, status: 'shipped' });
    woo().seed({ id: 423, status: 'shipped' });
    const unread = v2().addLabel({ orderNumber: '422', trackingNumber: '1Z422' });
    const unwritten = v2().addLabel({ orderNumber: '423', trackingNumber: '1Z423' });
    v2().failNext(503, 503);
    expect((await deliver(trackEvent(SHIPSTATION_V2_BASE_URL, unread, 'DE', '2026-05-07T10:00:00Z'))).status).toBe(200);
    ctx.providers.failStore('PUT', /orders\/423$/, 503, 'unavailable', 1);
    expect((await deliver(trackEvent(SHIPSTATION_V2_BASE_URL, unwritten, 'DE', '2026-05-07T11:00:00Z'))).status).toBe(200);
    expect(woo().get(422).status).toBe('shipped');
    expect(woo().get(423).status).toBe('shipped');
    expect(await getServices().shippingReplay.counts()).toEqual({ waiting: 2, parked: 0 });

    const run = await cron(RETRY);

    expect(run.body).toMatchObject({ applied: 2, waiting: 0 });
    expect(woo().get(422).status).toBe('completed');
    expect(woo().get(423).status).toBe('completed');
    expect(woo().get(423).meta_data.find((m) => m.key === '_delivered_at')?.value).toBe('2026-05-07T11:00:00Z');
  });

  it('a delivery scanned before its order shipped writes nothing, waits in the replay and completes the order once it has shipped', async () => {
    woo().seed({ id: 424, status: 'processing' });
    const label = v2().addLabel({ orderNumber: '424', trackingNumber: '1Z424', carrierCode: 'ups', batchId: 'se-424' });

    expect((await deliver(trackEvent(SHIPSTATION_V2_BASE_URL, label, 'DE', '2026-05-07T12:00:00Z'))).status).toBe(200);
    expect(woo().get(424).status).toBe('processing');
    expect(woo().get(424).meta_data.find((m) => m.key === '_delivered_at')).toBeUndefined();
    expect(woo().listNotes(424)).toHaveLength(0);
    expect(loggedLines()).toContainEqual(expect.objectContaining({ event: 'shipping.delivery_before_shipment', orderId: 424, orderStatus: 'processing' }));

    expect((await deliver({ resource_url: `${SHIPSTATION_V2_BASE_URL}/v2/labels?batch_id=se-424`, resource_type: 'LABEL_CREATED_V2' })).status).toBe(200);
    expect(woo().get(424).status).toBe('shipped');

    const run = await cron(RETRY);

    expect(run.body).toMatchObject({ applied: 1, waiting: 0 });
    expect(woo().get(424).status).toBe('completed');
    expect(woo().get(424).meta_data.find((m) => m.key === '_delivered_at')?.value).toBe('2026-05-07T12:00:00Z');
  });

  it('a delivery whose carrier date is refused writes one note with one date, however often its write is retried', async () => {
    woo().seed({ id: 425, status: 'shipped' });
    const label = v2().addLabel({ orderNumber: '425', trackingNumber: '1Z425' });
    ctx.providers.failStore('PUT', /orders\/425$/, 503, 'unavailable', 1);

    expect((await deliver(trackEvent(SHIPSTATION_V2_BASE_URL, label, 'DE', 'see www.evil.example'))).status).toBe(200);
    expect(woo().get(425).status).toBe('shipped');
    const run = await cron(RETRY);

    expect(run.body).toMatchObject({ applied: 1, waiting: 0 });
    expect(woo().get(425).status).toBe('completed');
    const notes = woo().listNotes(425);
    expect(notes).toHaveLength(1);
    const deliveredAt = String(woo().get(425).meta_data.find((m) => m.key === '_delivered_at')?.value);
    expect(notes[0]?.note).toContain(`delivered (${deliveredAt}).`);
  });

  it('a label batch keeps the orders it shipped when the shipment of one label cannot be read, and the replay reads that shipment alone', async () => {
    woo().seed({ id: 426, status: 'processing' });
    woo().seed({ id: 427, status: 'processing' });
    const createdAt = '2026-05-01T10:00:00.000Z';
    v2().addLabel({ orderNumber: '426', trackingNumber: '1Z426', batchId: 'se-426', createdAt });
    const unread = v2().addLabel({ orderNumber: '427', trackingNumber: '1Z427', batchId: 'se-426', createdAt });
    v2().failPath(new RegExp(`/v2/shipments/${String(unread.shipment_id)}$`), 503, 503);

    expect((await deliver({ resource_url: `${SHIPSTATION_V2_BASE_URL}/v2/labels?batch_id=se-426`, resource_type: 'LABEL_CREATED_V2' })).status).toBe(200);
    expect(woo().get(426).status).toBe('shipped');
    expect(woo().get(427).status).toBe('processing');
    expect(loggedLines()).toContainEqual(expect.objectContaining({ event: 'shipping.replay_queued', kind: 'shipment', failure: 'shipstation:unavailable' }));
    const callsBefore = v2().calls.length;

    const run = await cron(RETRY);

    expect(run.body).toMatchObject({ applied: 1, waiting: 0 });
    expect(woo().get(427).status).toBe('shipped');
    expect(v2().calls.slice(callsBefore).map((c) => new URL(c.url).pathname)).toEqual([`/v2/shipments/${String(unread.shipment_id)}`]);
  });
});
