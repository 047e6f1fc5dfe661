/**
 * POST /api/shipping/webhook with ShipStation V2 deliveries, signed by the V2 stand-in
 * (stand-ins/shipstation/v2.ts) whose JWKS is served where SHIPSTATION_V2_JWKS_URL points.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { POST } from '@/app/api/shipping/webhook/route';
import { POST as SHIPSTATION_POST } from '@/app/api/shipstation/webhook/route';
import { POST as PAYMENT_INTENT_POST } from '@/app/api/payment-intent/route';
import { deliverEvent } from '../support/card-events';
import { getServices } from '@/lib/services';
import { trackEvent, V2_STAND_IN_API_KEY } from '@/stand-ins/shipstation/v2';
import { useTestEnv } from '../support/env';
import { freshIp, postJson, tokenFor } from '../support/requests';
import { loggedLines } from '../support/setup';
import { SHIPSTATION_V2_BASE_URL, SHIPSTATION_V2_ENV, SHIPSTATION_V2_JWKS_URL, useShippingProviders } from '../support/shipstation';

const ctx = useShippingProviders();
const woo = () => ctx.providers.woo;
const v2 = () => ctx.shipStationV2;
const SECRET = 'shipping-secret-0123456789';

function post(body: string, headers: Record<string, string>, route = POST, query = '') {
  return route(
    new Request(`http://localhost:3000/api/shipping/webhook${query}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-forwarded-for': freshIp(), ...headers },
      body,
    }),
  );
}

/** A delivery as ShipStation V2 sends it, signed by the stand-in's current key. */
function deliver(payload: object, options: Parameters<ReturnType<typeof v2>['delivery']>[1] = {}, route = POST) {
  const { body, headers } = v2().delivery(payload, options);
  return post(body, headers, route);
}

const meta = (orderId: number, key: string) => woo().get(orderId).meta_data.find((m) => m.key === key)?.value;
const apiCalls = () => v2().calls.filter((c) => !c.url.endsWith('/jwks'));

beforeEach(() => {
  useTestEnv({ ...SHIPSTATION_V2_ENV, SHIPPING_WEBHOOK_SECRET: SECRET });
});

afterEach(() => {
  vi.useRealTimers();
});

describe('a V2 delivery is verified by its RSA-SHA256 signature', () => {
  it('a signed FULFILLMENT_SHIPPED_V2 is accepted without the V1 shared secret and ships its order', async () => {
    woo().seed({ id: 301, status: 'processing' });
    v2().addFulfillment({ orderNumber: '301', trackingNumber: '770000000001', carrier: 'FedEx', shipDate: '2026-05-04T10:00:00Z' });

    const response = await deliver({ resource_url: `${SHIPSTATION_V2_BASE_URL}/v2/fulfillments?batch_id=se-1`, resource_type: 'FULFILLMENT_SHIPPED_V2' });

    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ received: true });
    expect(woo().get(301).status).toBe('shipped');
    expect(woo().get(301).customer_note).toBe('Your order has been shipped! Tracking Number: 770000000001 | Carrier: FedEx | Ship Date: 2026-05-04T10:00:00Z');
    expect(meta(301, '_tracking_number')).toBe('770000000001');
    expect(apiCalls().every((c) => c.apiKey === V2_STAND_IN_API_KEY)).toBe(true);
    expect(v2().jwksReads).toBe(1);
  });

  it('the same delivery on /api/shipstation/webhook is handled alike', async () => {
    woo().seed({ id: 302, status: 'processing' });
    v2().addFulfillment({ orderNumber: '302', trackingNumber: '770000000002' });

    const response = await deliver({ resource_url: `${SHIPSTATION_V2_BASE_URL}/v2/fulfillments`, resource_type: 'FULFILLMENT_SHIPPED_V2' }, {}, SHIPSTATION_POST);

    expect(response.status).toBe(200);
    expect(woo().get(302).status).toBe('shipped');
  });

  it('a tampered body is answered 400 and applies nothing', async () => {
    woo().seed({ id: 303, status: 'processing' });
    v2().addFulfillment({ orderNumber: '303', trackingNumber: '770000000003' });
    const { body, headers } = v2().delivery({ resource_url: `${SHIPSTATION_V2_BASE_URL}/v2/labels?batch_id=se-9`, resource_type: 'LABEL_CREATED_V2' });

    const response = await post(body.replace('/v2/labels?batch_id=se-9', '/v2/fulfillments'), headers);

    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({ error: 'Invalid signature' });
    expect(apiCalls()).toHaveLength(0);
    expect(woo().get(303).status).toBe('processing');
    expect(loggedLines()).toContainEqual(expect.objectContaining({ event: 'shipping.v2_signature_refused', reason: 'bad_signature' }));
  });

  it('a timestamp more than 5 minutes old is answered 400; one a little ahead of the clock is accepted', async () => {
    woo().seed({ id: 304, status: 'processing' });
    v2().addFulfillment({ orderNumber: '304', trackingNumber: '770000000004' });
    const payload = { resource_url: `${SHIPSTATION_V2_BASE_URL}/v2/fulfillments`, resource_type: 'FULFILLMENT_SHIPPED_V2' };

    const stale = await deliver(payload, { timestamp: new Date(Date.now() - 5 * 60_000 - 5_000).toISOString() });
    expect(stale.status).toBe(400);
    expect(woo().get(304).status).toBe('processing');
    expect(loggedLines()).toContainEqual(expect.objectContaining({ event: 'shipping.v2_signature_refused', reason: 'stale' }));

    const ahead = await deliver(payload, { timestamp: new Date(Date.now() + 90_000).toISOString() });
    expect(ahead.status).toBe(200);
    expect(woo().get(304).status).toBe('shipped');
  });

  it('a key id not in the cached keys reads the JWKS once more and is accepted when ShipStation published it', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    woo().seed({ id: 305, status: 'processing' });
    woo().seed({ id: 306, status: 'processing' });
    v2().addFulfillment({ orderNumber: '305', trackingNumber: '770000000005' });
    const payload = { resource_url: `${SHIPSTATION_V2_BASE_URL}/v2/fulfillments`, resource_type: 'FULFILLMENT_SHIPPED_V2' };
    expect((await deliver(payload)).status).toBe(200);
    expect(v2().jwksReads).toBe(1);

    vi.setSystemTime(Date.now() + 61_000);
    v2().rotateKey();
    v2().addFulfillment({ orderNumber: '306', trackingNumber: '770000000006' });
    const rotated = await deliver(payload);

    expect(rotated.status).toBe(200);
    expect(v2().jwksReads).toBe(2);
    expect(woo().get(306).status).toBe('shipped');
  });

  it('key ids the JWKS does not hold are answered 400, and a stream of them reads the JWKS at most once a minute', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    woo().seed({ id: 307, status: 'processing' });
    v2().addFulfillment({ orderNumber: '307', trackingNumber: '770000000007' });
    const payload = { resource_url: `${SHIPSTATION_V2_BASE_URL}/v2/fulfillments`, resource_type: 'FULFILLMENT_SHIPPED_V2' };

    const answers = [];
    for (let i = 0; i < 5; i += 1) answers.push((await deliver(payload, { key: v2().foreignKey() })).status);

    expect(answers).toEqual([400, 400, 400, 400, 400]);
    expect(v2().jwksReads).toBe(1);
    expect(woo().get(307).status).toBe('processing');
    expect(loggedLines()).toContainEqual(expect.objectContaining({ event: 'shipping.v2_signature_refused', reason: 'unknown_key' }));

    vi.setSystemTime(Date.now() + 61_000);
    expect((await deliver(payload, { key: v2().foreignKey() })).status).toBe(400);
    expect(v2().jwksReads).toBe(2);
  });

  it('an unsigned V2 delivery is answered 404, with or without the V1 secret, and applies nothing', async () => {
    woo().seed({ id: 308, status: 'processing' });
    v2().addFulfillment({ orderNumber: '308', trackingNumber: '770000000008' });
    const body = JSON.stringify({ resource_url: `${SHIPSTATION_V2_BASE_URL}/v2/fulfillments`, resource_type: 'FULFILLMENT_SHIPPED_V2' });

    const withSecret = await post(body, { 'x-webhook-secret': SECRET });
    const { headers } = v2().delivery(JSON.parse(body) as object);
    const partial = await post(body, { 'x-shipengine-rsa-sha256-key-id': headers['x-shipengine-rsa-sha256-key-id'] as string });

    expect(withSecret.status).toBe(404);
    expect(partial.status).toBe(404);
    expect(v2().calls).toHaveLength(0);
    expect(woo().get(308).status).toBe('processing');
  });

  it('signing keys that cannot be read are answered 503, so ShipStation delivers again', async () => {
    useTestEnv({ ...SHIPSTATION_V2_ENV, SHIPSTATION_V2_JWKS_URL: 'https://keys.shipstation.test/jwks' });
    woo().seed({ id: 309, status: 'processing' });
    const { http, HttpResponse } = await import('msw');
    ctx.server.use(http.get('https://keys.shipstation.test/jwks', () => HttpResponse.json({ message: 'down' }, { status: 502 })));

    const response = await deliver({ resource_url: `${SHIPSTATION_V2_BASE_URL}/v2/fulfillments`, resource_type: 'FULFILLMENT_SHIPPED_V2' });

    expect(response.status).toBe(503);
    expect(woo().get(309).status).toBe('processing');
  });
});

describe('V2 event types', () => {
  it('LABEL_CREATED_V2 reads every page of its labels, ships each order through its shipment number, skips return labels and notes a voided one', async () => {
    for (const id of [311, 312, 313, 314]) woo().seed({ id, status: 'processing' });
    // One batch, one instant: the list (newest first) then keeps the order the labels were made in, whatever the clock did.
    const createdAt = '2026-05-01T10:00:00.000Z';
    const first = v2().addLabel({ orderNumber: '311', trackingNumber: '9400111899223197428311', carrierCode: 'stamps_com', shipDate: '2026-05-01', batchId: 'se-77', createdAt });
    v2().addLabel({ orderNumber: '312', trackingNumber: '1Z999AA10123456312', carrierCode: 'ups', shipDate: '2026-05-02', batchId: 'se-77', createdAt });
    v2().addLabel({ orderNumber: '313', trackingNumber: '9400111899223197428313', isReturnLabel: true, batchId: 'se-77', createdAt });
    v2().addLabel({ orderNumber: '314', trackingNumber: '776655443314', carrierCode: 'fedex', voided: true, batchId: 'se-77', createdAt });
    v2().addLabel({ orderNumber: '311', trackingNumber: '9400111899223197428399', carrierCode: 'stamps_com', shipDate: '2026-05-01', batchId: 'se-77', createdAt });

    const response = await deliver({ resource_url: `${SHIPSTATION_V2_BASE_URL}/v2/labels?batch_id=se-77&page_size=2`, resource_type: 'LABEL_CREATED_V2' });

    expect(response.status).toBe(200);
    const pages = apiCalls().filter((c) => new URL(c.url).pathname === '/v2/labels').map((c) => new URL(c.url).searchParams.get('page'));
    expect(pages).toEqual([null, '2', '3']);
    // One shipment read per order, the second label of 311 included.
    expect(apiCalls().filter((c) => c.url.includes('/v2/shipments/'))).toHaveLength(3);
    expect(woo().get(311).status).toBe('shipped');
    expect(meta(311, '_tracking_number')).toBe(String(first.tracking_number));
    expect(woo().get(311).customer_note).toContain('Another package of your order has been shipped! Tracking Number: 9400111899223197428399');
    expect(woo().get(312).status).toBe('shipped');
    expect(woo().get(312).customer_note).toBe('Your order has been shipped! Tracking Number: 1Z999AA10123456312 | Carrier: ups | Ship Date: 2026-05-02');
    expect(woo().get(313).status).toBe('processing');
    expect(ctx.providers.orderUpdates(313)).toHaveLength(0);
    expect(woo().get(314).status).toBe('processing');
    expect(woo().listNotes(314)).toEqual([expect.objectContaining({ note: expect.stringContaining('(tracking number 776655443314): its label was cancelled'), customer_note: false })]);
    expect(loggedLines()).toContainEqual(expect.objectContaining({ event: 'shipping.resource_read', eventType: 'LABEL_CREATED_V2', shipments: 4, voided: 1 }));
  });

  it('TRACK_EVENT_V2 delivered notes the delivery, writes _delivered_at and completes a shipped order, once', async () => {
    woo().seed({ id: 321, status: 'shipped' });
    const label = v2().addLabel({ orderNumber: '321', trackingNumber: '1Z999AA10123456321', carrierCode: 'ups' });
    const event = trackEvent(SHIPSTATION_V2_BASE_URL, label, 'DE', '2026-05-06T14:03:00Z');

    expect((await deliver(event)).status).toBe(200);
    expect((await deliver(event)).status).toBe(200);

    expect(woo().get(321).status).toBe('completed');
    expect(meta(321, '_delivered_at')).toBe('2026-05-06T14:03:00Z');
    expect(woo().listNotes(321)).toEqual([
      expect.objectContaining({ note: 'ShipStation tracking reports the package with tracking number 1Z999AA10123456321 delivered (2026-05-06T14:03:00Z).', customer_note: false }),
    ]);
    expect(ctx.providers.orderUpdates(321)).toHaveLength(1);
    expect(loggedLines()).toContainEqual(expect.objectContaining({ event: 'shipping.already_delivered', orderId: 321 }));
  });

  it('with SHIPPING_DELIVERED_COMPLETES=off a delivered order keeps its status, the delivery still recorded', async () => {
    useTestEnv({ ...SHIPSTATION_V2_ENV, SHIPPING_DELIVERED_COMPLETES: 'off' });
    woo().seed({ id: 322, status: 'shipped' });
    const label = v2().addLabel({ orderNumber: '322', trackingNumber: '1Z999AA10123456322' });

    expect((await deliver(trackEvent(SHIPSTATION_V2_BASE_URL, label, 'DE', '2026-05-06T15:00:00Z'))).status).toBe(200);

    expect(woo().get(322).status).toBe('shipped');
    expect(meta(322, '_delivered_at')).toBe('2026-05-06T15:00:00Z');
  });

  it('TRACK_EVENT_V2 delivered on a cancelled order writes nothing and queues nothing', async () => {
    woo().seed({ id: 325, status: 'cancelled' });
    const label = v2().addLabel({ orderNumber: '325', trackingNumber: '1Z999AA10123456325' });

    expect((await deliver(trackEvent(SHIPSTATION_V2_BASE_URL, label, 'DE', '2026-05-06T16:00:00Z'))).status).toBe(200);

    expect(woo().get(325).status).toBe('cancelled');
    expect(meta(325, '_delivered_at')).toBeUndefined();
    expect(woo().listNotes(325)).toHaveLength(0);
    expect(ctx.providers.orderUpdates(325)).toHaveLength(0);
    expect(await getServices().shippingReplay.counts()).toEqual({ waiting: 0, parked: 0 });
    expect(loggedLines()).toContainEqual(expect.objectContaining({ event: 'shipping.delivery_order_not_shipped', orderId: 325, orderStatus: 'cancelled' }));
  });

  it('TRACK_EVENT_V2 delivered on a return or voided label records nothing on the order', async () => {
    woo().seed({ id: 326, status: 'shipped' });
    const returned = v2().addLabel({ orderNumber: '326', trackingNumber: '1Z999AA10123456326', isReturnLabel: true });
    const voided = v2().addLabel({ orderNumber: '326', trackingNumber: '1Z999AA10123456399', voided: true });

    expect((await deliver(trackEvent(SHIPSTATION_V2_BASE_URL, returned, 'DE', '2026-05-06T17:00:00Z'))).status).toBe(200);
    expect((await deliver(trackEvent(SHIPSTATION_V2_BASE_URL, voided, 'DE', '2026-05-06T18:00:00Z'))).status).toBe(200);

    expect(woo().get(326).status).toBe('shipped');
    expect(meta(326, '_delivered_at')).toBeUndefined();
    expect(woo().listNotes(326)).toHaveLength(0);
    expect(ctx.providers.orderUpdates(326)).toHaveLength(0);
    expect(await getServices().shippingReplay.counts()).toEqual({ waiting: 0, parked: 0 });
    expect(loggedLines().filter((l) => l.event === 'shipping.delivery_label_skipped').map((l) => l.reason)).toEqual(['return_label', 'voided_label']);
  });

  it('TRACK_EVENT_V2 with another status and the other V2 types are logged only', async () => {
    woo().seed({ id: 323, status: 'shipped' });
    const label = v2().addLabel({ orderNumber: '323', trackingNumber: '1Z999AA10123456323' });

    expect((await deliver(trackEvent(SHIPSTATION_V2_BASE_URL, label, 'IT'))).status).toBe(200);
    expect((await deliver({ resource_url: `${SHIPSTATION_V2_BASE_URL}/v2/shipments/se-1`, resource_type: 'SHIPMENT_CREATED_V2' })).status).toBe(200);
    expect((await deliver({ resource_url: `${SHIPSTATION_V2_BASE_URL}/v2/batches/se-1`, resource_type: 'BATCH_PROCESSED_V2' })).status).toBe(200);

    expect(apiCalls()).toHaveLength(0);
    expect(ctx.providers.orderUpdates()).toHaveLength(0);
    expect(loggedLines()).toContainEqual(expect.objectContaining({ event: 'shipping.track_event', statusCode: 'IT' }));
    expect(loggedLines().filter((l) => l.event === 'shipping.v2_logged_only').map((l) => l.eventType)).toEqual(['SHIPMENT_CREATED_V2', 'BATCH_PROCESSED_V2']);
  });

  it('a V2 delivery without SHIPSTATION_V2_API_KEY is acknowledged and logged with the setting to add', async () => {
    useTestEnv({ SHIPSTATION_V2_API_KEY: undefined });
    woo().seed({ id: 324, status: 'processing' });

    const response = await deliver({ resource_url: `${SHIPSTATION_V2_BASE_URL}/v2/fulfillments`, resource_type: 'FULFILLMENT_SHIPPED_V2' });

    expect(response.status).toBe(200);
    expect(apiCalls()).toHaveLength(0);
    expect(loggedLines()).toContainEqual(expect.objectContaining({ event: 'shipping.resource_url_not_configured', hint: expect.stringContaining('SHIPSTATION_V2_API_KEY') }));
  });
});

describe('V2 shipments go through the V1 shipping code', () => {
  it('STRIPE_CAPTURE=on_shipment: the authorized card is captured before a V2 label ships the order', async () => {
    useTestEnv({ ...SHIPSTATION_V2_ENV, STRIPE_CAPTURE: 'on_shipment' });
    woo().seed({ id: 341, lines: [{ total: '20.00' }, { total: '10.00' }] });
    const intent = await PAYMENT_INTENT_POST(postJson('/api/payment-intent', { token: await tokenFor(341) }));
    const intentId = ((await intent.json()) as { payment_intent_id: string }).payment_intent_id;
    ctx.providers.stripe.authorize(intentId);
    const authorized = ctx.providers.stripe.events.events.filter((e) => e.type === 'payment_intent.amount_capturable_updated').at(-1)!;
    expect((await deliverEvent(authorized)).status).toBe(200);
    const resourceUrl = v2().addBatch('se-341', [{ orderNumber: '341', trackingNumber: '9400111899223197428341' }], SHIPSTATION_V2_BASE_URL);

    expect((await deliver({ resource_url: resourceUrl, resource_type: 'LABEL_CREATED_V2' })).status).toBe(200);

    expect(ctx.providers.callsTo('card', 'POST', /\/capture$/)).toHaveLength(1);
    expect(woo().get(341).status).toBe('shipped');
  });

  it('a store without the `shipped` status gets `completed`, as for V1', async () => {
    ctx.providers.reset({ customStatuses: ['awaiting_shipment'] });
    woo().seed({ id: 342, status: 'processing' });
    v2().addFulfillment({ orderNumber: '342', trackingNumber: '770000000342' });

    expect((await deliver({ resource_url: `${SHIPSTATION_V2_BASE_URL}/v2/fulfillments`, resource_type: 'FULFILLMENT_SHIPPED_V2' })).status).toBe(200);

    expect(woo().get(342).status).toBe('completed');
    expect(meta(342, '_tracking_number')).toBe('770000000342');
  });
});

describe('V2 reads', () => {
  it.each([
    ['another host', 'https://api.shipstation.com.attacker.example/v2/fulfillments', 'foreign_origin'],
    ['the V1 host', 'https://ssapi.shipstation.com/v2/fulfillments', 'foreign_origin'],
    ['plain http', 'http://api.shipstation.com/v2/fulfillments', 'foreign_origin'],
  ])('a resource_url on %s is refused before any call and logged', async (_what, resourceUrl, reason) => {
    const response = await deliver({ resource_url: resourceUrl, resource_type: 'FULFILLMENT_SHIPPED_V2' });

    expect(response.status).toBe(200);
    expect(ctx.outgoing.filter((url) => !url.startsWith(SHIPSTATION_V2_JWKS_URL))).toEqual([]);
    expect(loggedLines()).toContainEqual(expect.objectContaining({ event: 'shipping.resource_url_refused', reason }));
  });

  it('a delivered TRACK_EVENT_V2 naming a label on another host is refused before any call and logged', async () => {
    woo().seed({ id: 333, status: 'shipped' });
    const label = v2().addLabel({ orderNumber: '333', trackingNumber: '1Z999AA10123456333' });

    const response = await deliver(trackEvent('https://api.shipstation.com.attacker.example', label, 'DE'));

    expect(response.status).toBe(200);
    expect(apiCalls()).toHaveLength(0);
    expect(woo().get(333).status).toBe('shipped');
    expect(loggedLines()).toContainEqual(expect.objectContaining({ event: 'shipping.resource_url_refused', reason: 'foreign_origin' }));
  });

  it('a 429 is waited out for its Retry-After and the read goes on', async () => {
    woo().seed({ id: 331, status: 'processing' });
    v2().addFulfillment({ orderNumber: '331', trackingNumber: '770000000331' });
    v2().throttleNext(1);

    const started = Date.now();
    const response = await deliver({ resource_url: `${SHIPSTATION_V2_BASE_URL}/v2/fulfillments`, resource_type: 'FULFILLMENT_SHIPPED_V2' });

    expect(response.status).toBe(200);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
    expect(apiCalls()).toHaveLength(2);
    expect(woo().get(331).status).toBe('shipped');
  });

  it('a Retry-After longer than the request can wait queues the batch, and no call is made until it has passed', async () => {
    woo().seed({ id: 332, status: 'processing' });
    v2().addFulfillment({ orderNumber: '332', trackingNumber: '770000000332' });
    v2().throttleNext(30);
    const payload = { resource_url: `${SHIPSTATION_V2_BASE_URL}/v2/fulfillments`, resource_type: 'FULFILLMENT_SHIPPED_V2' };

    expect((await deliver(payload)).status).toBe(200);
    expect((await deliver(payload)).status).toBe(200);

    expect(apiCalls()).toHaveLength(1);
    expect(woo().get(332).status).toBe('processing');
    expect(await getServices().shippingReplay.counts()).toEqual({ waiting: 2, parked: 0 });
    expect(loggedLines().filter((l) => l.event === 'shipping.replay_queued').map((l) => l.failure)).toEqual([
      'shipstation:rate_limited',
      'shipstation:rate_limited',
    ]);
  });
});
