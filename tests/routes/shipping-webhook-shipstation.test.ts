/**
 * POST /api/shipping/webhook with real ShipStation deliveries (docs/decisions.md#d11):
 * the body is only `{resource_url, resource_type}`; the service reads the
 * shipments from ShipStation and applies each non-voided one.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { POST } from '@/app/api/shipping/webhook/route';
import { useTestEnv } from '../support/env';
import { freshIp, postJson } from '../support/requests';
import { awayFromWindowEdge, noRedis, REDIS_SKIP_REASON, REDIS_URL, testPrefix } from '../support/redis';
import { loggedLines } from '../support/setup';
import {
  SHIPSTATION_BASE_URL,
  SHIPSTATION_ENV,
  TEST_SHIPSTATION_KEY,
  TEST_SHIPSTATION_SECRET,
  useShippingProviders,
} from '../support/shipstation';

const ctx = useShippingProviders();
const woo = () => ctx.providers.woo;
const BASIC = `Basic ${Buffer.from(`${TEST_SHIPSTATION_KEY}:${TEST_SHIPSTATION_SECRET}`).toString('base64')}`;

function deliver(resourceUrl: string, resourceType = 'SHIP_NOTIFY', extra: Record<string, unknown> = {}) {
  return POST(postJson('/api/shipping/webhook', { resource_url: resourceUrl, resource_type: resourceType, ...extra }, { origin: null }));
}

beforeEach(() => {
  useTestEnv(SHIPSTATION_ENV);
});

describe('a SHIP_NOTIFY delivery is read from ShipStation', () => {
  it('applies each non-voided shipment of the recorded response and only notes the voided one', async () => {
    woo().seed({ id: 201, status: 'processing' });
    woo().seed({ id: 202, status: 'awaiting_shipment' });
    woo().seed({ id: 203, status: 'processing' });
    const resourceUrl = ctx.shipStation.addBatch('12345678', [
      { orderNumber: '201', trackingNumber: '9400111899223197428490', carrierCode: 'stamps_com', shipDate: '2026-05-01' },
      { orderNumber: '202', trackingNumber: '1Z999AA10123456784', carrierCode: 'ups', shipDate: '2026-05-02' },
      { orderNumber: '203', trackingNumber: '776655443322', carrierCode: 'fedex', shipDate: '2026-05-01', voided: true },
    ]);

    const response = await deliver(resourceUrl);

    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ received: true });
    expect(ctx.shipStation.calls).toEqual([{ url: resourceUrl, authorization: BASIC }]);

    const [first] = ctx.providers.orderUpdates(201);
    expect(first?.status).toBe('shipped');
    expect(first?.customer_note).toBe(
      'Your order has been shipped! Tracking Number: 9400111899223197428490 | Carrier: stamps_com | Ship Date: 2026-05-01',
    );
    const meta = Object.fromEntries((first?.meta_data as { key: string; value: string }[]).map((m) => [m.key, m.value]));
    expect(meta).toMatchObject({
      _tracking_number: '9400111899223197428490',
      _shipping_carrier: 'stamps_com',
      _shipped_date: '2026-05-01',
    });
    expect(woo().get(201).status).toBe('shipped');
    expect(woo().get(202).status).toBe('shipped');
    expect(woo().get(202).customer_note).toBe(
      'Your order has been shipped! Tracking Number: 1Z999AA10123456784 | Carrier: ups | Ship Date: 2026-05-02',
    );

    // The voided label ships nothing: a private note for the shop, the package listed as voided.
    expect(woo().get(203).status).toBe('processing');
    expect(woo().get(203).customer_note).toBe('');
    expect(woo().listNotes(203)).toEqual([expect.objectContaining({ note: expect.stringContaining('(tracking number 776655443322): its label was cancelled'), customer_note: false })]);
    expect(loggedLines()).toContainEqual(expect.objectContaining({ event: 'shipping.resource_read', shipments: 3, voided: 1 }));
  });

  it.each(['ITEM_SHIP_NOTIFY', 'ITEM_SHIPPED'])('%s deliveries are read the same way', async (type) => {
    woo().seed({ id: 204, status: 'processing' });
    const resourceUrl = ctx.shipStation.addBatch('22', [
      { orderNumber: '204', trackingNumber: 'TRK204', carrierCode: 'usps', shipDate: '2026-05-03' },
    ]);

    await deliver(resourceUrl, type);

    expect(ctx.shipStation.calls).toHaveLength(1);
    expect(woo().get(204).status).toBe('shipped');
  });

  it('a shipment without tracking details writes the bare note and empty meta', async () => {
    woo().seed({ id: 205, status: 'processing' });
    const resourceUrl = ctx.shipStation.addBatch('23', [{ orderNumber: '205', trackingNumber: null, carrierCode: null, shipDate: null }]);

    await deliver(resourceUrl);

    const [update] = ctx.providers.orderUpdates(205);
    expect(update?.customer_note).toBe('Your order has been shipped!');
    const meta = Object.fromEntries((update?.meta_data as { key: string; value: string }[]).map((m) => [m.key, m.value]));
    expect(meta._tracking_number).toBe('');
    expect(meta._shipping_carrier).toBe('');
  });

  it('shipments whose orders are not shippable, unknown or not numbered change nothing', async () => {
    woo().seed({ id: 206, status: 'pending' });
    const resourceUrl = ctx.shipStation.addBatch('24', [
      { orderNumber: '206', trackingNumber: 'A', carrierCode: 'ups', shipDate: '2026-05-01' },
      { orderNumber: '99999', trackingNumber: 'B', carrierCode: 'ups', shipDate: '2026-05-01' },
      { orderNumber: 'WEB-1001', trackingNumber: 'C', carrierCode: 'ups', shipDate: '2026-05-01' },
    ]);

    const response = await deliver(resourceUrl);

    expect(response.status).toBe(200);
    expect(ctx.providers.orderUpdates()).toHaveLength(0);
    expect(woo().get(206).status).toBe('pending');
    const outcomes = loggedLines().filter((l) => l.event === 'shipping.shipment').map((l) => l.outcome);
    expect(outcomes).toEqual(['ignored_status', 'order_fetch_failed', 'bad_order_number']);
  });

  it('two packages of one order in a batch: the first ships it, the second adds its tracking', async () => {
    woo().seed({ id: 207, status: 'processing' });
    const resourceUrl = ctx.shipStation.addBatch('25', [
      { orderNumber: '207', trackingNumber: 'FIRST', carrierCode: 'ups', shipDate: '2026-05-01' },
      { orderNumber: '207', trackingNumber: 'SECOND', carrierCode: 'ups', shipDate: '2026-05-01' },
    ]);

    await deliver(resourceUrl);

    // The second package goes through the companion plugin's merge, which adds it to the list once.
    expect(ctx.providers.orderUpdates(207).map((u) => u.status)).toEqual(['shipped']);
    expect(ctx.providers.callsTo('store', 'POST', /\/orders\/207\/shipment-packages$/)).toHaveLength(1);
    expect(woo().get(207).customer_note).toBe(
      'Your order has been shipped! Tracking Number: FIRST | Carrier: ups | Ship Date: 2026-05-01\n' +
        'Another package of your order has been shipped! Tracking Number: SECOND | Carrier: ups | Ship Date: 2026-05-01',
    );
  });

  it('reads every page of a large batch', async () => {
    ctx.shipStation.pageSize = 2;
    for (const id of [211, 212, 213]) woo().seed({ id, status: 'processing' });
    const resourceUrl = ctx.shipStation.addBatch('26', [211, 212, 213].map((id) => ({
      orderNumber: String(id),
      trackingNumber: `T${id}`,
      carrierCode: 'ups',
      shipDate: '2026-05-01',
    })));

    await deliver(resourceUrl);

    expect(ctx.shipStation.calls.map((c) => new URL(c.url).searchParams.get('page'))).toEqual([null, '2']);
    expect([211, 212, 213].map((id) => woo().get(id).status)).toEqual(['shipped', 'shipped', 'shipped']);
  });

  it('an inline order_number wins: the resource is not read', async () => {
    woo().seed({ id: 208, status: 'processing' });
    const resourceUrl = ctx.shipStation.addBatch('27', [{ orderNumber: '209', trackingNumber: 'X', carrierCode: 'ups', shipDate: null }]);

    await deliver(resourceUrl, 'SHIP_NOTIFY', { order_number: '208', carrier: 'UPS' });

    expect(ctx.shipStation.calls).toHaveLength(0);
    expect(woo().get(208).status).toBe('shipped');
  });

  it.each(['ORDER_NOTIFY', 'ITEM_ORDER_NOTIFY'])('%s deliveries are logged and never read', async (type) => {
    const resourceUrl = ctx.shipStation.addBatch('28', []);

    const response = await deliver(resourceUrl, type);

    expect(response.status).toBe(200);
    expect(ctx.outgoing).toHaveLength(0);
  });
});

describe('without ShipStation credentials', () => {
  it.each([
    ['neither', { SHIPSTATION_API_KEY: undefined, SHIPSTATION_API_SECRET: undefined }],
    ['only the key', { SHIPSTATION_API_SECRET: undefined }],
  ])('%s set: nothing is fetched and the reason is logged', async (_label, overrides) => {
    useTestEnv({ ...SHIPSTATION_ENV, ...overrides });
    const resourceUrl = ctx.shipStation.addBatch('30', [{ orderNumber: '230', trackingNumber: 'T', carrierCode: 'ups', shipDate: null }]);
    woo().seed({ id: 230, status: 'processing' });

    const response = await deliver(resourceUrl);

    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ received: true });
    expect(ctx.outgoing).toHaveLength(0);
    expect(woo().get(230).status).toBe('processing');
    expect(loggedLines()).toContainEqual(expect.objectContaining({ event: 'shipping.resource_url_not_configured' }));
  });
});

describe('resource_url on another origin is never fetched', () => {
  it.each([
    ['another host', 'https://attacker.example/shipments?batchId=1', 'foreign_origin'],
    ['a lookalike host', 'https://ssapi.shipstation.com.attacker.example/shipments?batchId=1', 'foreign_origin'],
    ['a subdomain', 'https://internal.ssapi.shipstation.com/shipments', 'foreign_origin'],
    ['another scheme', 'http://ssapi.shipstation.com/shipments?batchId=1', 'foreign_origin'],
    ['another port', 'https://ssapi.shipstation.com:8443/shipments?batchId=1', 'foreign_origin'],
    ['a metadata address', 'http://169.254.169.254/latest/meta-data/', 'foreign_origin'],
    ['credentials in the URL', 'https://user:pass@ssapi.shipstation.com/shipments?batchId=1', 'credentials_in_url'],
    ['not a URL', 'shipments?batchId=1', 'malformed'],
  ])('%s', async (_label, resourceUrl, reason) => {
    woo().seed({ id: 240, status: 'processing' });

    const response = await deliver(resourceUrl);

    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ received: true });
    expect(ctx.outgoing).toEqual([]);
    expect(woo().get(240).status).toBe('processing');
    expect(loggedLines()).toContainEqual(expect.objectContaining({ event: 'shipping.resource_url_refused', reason }));
  });

  it('the refusal log names the origin only, never the path or query', async () => {
    await deliver('https://attacker.example/collect?token=very-private-value');

    expect(loggedLines()).toContainEqual(
      expect.objectContaining({ event: 'shipping.resource_url_refused', origin: 'https://attacker.example' }),
    );
    expect(JSON.stringify(loggedLines())).not.toContain('very-private-value');
  });

  it('a configured base URL is the one allowed origin', async () => {
    useTestEnv({ ...SHIPSTATION_ENV, SHIPSTATION_API_BASE_URL: 'https://shipstation-proxy.internal.test' });

    await deliver(`${SHIPSTATION_BASE_URL}/shipments?batchId=1`);

    expect(ctx.outgoing).toEqual([]);
    expect(loggedLines()).toContainEqual(expect.objectContaining({ event: 'shipping.resource_url_refused', reason: 'foreign_origin' }));
  });

  it('a redirect from ShipStation is not followed', async () => {
    ctx.shipStation.answerNext({ status: 302, headers: { Location: 'https://attacker.example/steal' } });

    const response = await deliver(`${SHIPSTATION_BASE_URL}/shipments?batchId=31`);

    expect(response.status).toBe(200);
    expect(ctx.outgoing).toEqual([`${SHIPSTATION_BASE_URL}/shipments?batchId=31`]);
    expect(loggedLines()).toContainEqual(expect.objectContaining({ event: 'shipping.resource_read_failed' }));
  });
});

describe('ShipStation failures are answered 200 and logged without the body', () => {
  it.each([
    [500, 'unavailable'],
    [401, 'rejected'],
    [404, 'rejected'],
  ])('HTTP %i', async (status, failure) => {
    woo().seed({ id: 250, status: 'processing' });
    // Twice: a 5xx page is read once more before the webhook gives up.
    ctx.shipStation.answerNext(...Array.from({ length: 2 }, () => ({ status, body: { Message: 'upstream-private-detail' } })));

    const response = await deliver(`${SHIPSTATION_BASE_URL}/shipments?batchId=32`);

    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ received: true });
    expect(ctx.providers.callsTo('store')).toHaveLength(0);
    expect(loggedLines()).toContainEqual(expect.objectContaining({ event: 'shipping.resource_read_failed', failure, status }));
    expect(JSON.stringify(loggedLines())).not.toContain('upstream-private-detail');
  });

  it('a response that is not a shipments list', async () => {
    ctx.shipStation.answerNext({ status: 200, body: { orders: [] } });

    const response = await deliver(`${SHIPSTATION_BASE_URL}/shipments?batchId=33`);

    expect(response.status).toBe(200);
    expect(loggedLines()).toContainEqual(expect.objectContaining({ event: 'shipping.resource_read_failed', failure: 'bad_response' }));
  });

  it('a ShipStation slower than the upstream timeout', async () => {
    useTestEnv({ ...SHIPSTATION_ENV, UPSTREAM_TIMEOUT_MS: '200' });
    // Slow on the retry too.
    ctx.shipStation.answerNext(...Array.from({ length: 2 }, () => ({ status: 200, body: { shipments: [] }, delayMs: 5_000 })));
    const started = Date.now();

    const response = await deliver(`${SHIPSTATION_BASE_URL}/shipments?batchId=34`);

    expect(response.status).toBe(200);
    // Not a speed target: the request did not wait for even one slow answer (5 s), so the timeout cut it.
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(loggedLines()).toContainEqual(expect.objectContaining({ event: 'shipping.resource_read_failed', failure: 'timeout' }));
  });

  it('the credentials never appear in a log line', async () => {
    woo().seed({ id: 251, status: 'processing' });
    const resourceUrl = ctx.shipStation.addBatch('35', [{ orderNumber: '251', trackingNumber: 'T', carrierCode: 'ups', shipDate: null }]);
    await deliver(resourceUrl);
    ctx.shipStation.answerNext({ status: 500 });
    await deliver(resourceUrl);

    const logs = JSON.stringify(loggedLines());
    for (const secret of [TEST_SHIPSTATION_KEY, TEST_SHIPSTATION_SECRET, BASIC.slice('Basic '.length)]) expect(logs).not.toContain(secret);
  });
});

describe("ShipStation's 40 requests per minute", () => {
  it('a 429 with a short reset is waited out and retried once', async () => {
    woo().seed({ id: 260, status: 'processing' });
    const resourceUrl = ctx.shipStation.addBatch('40', [{ orderNumber: '260', trackingNumber: 'T', carrierCode: 'ups', shipDate: null }]);
    ctx.shipStation.answerNext({ status: 429, headers: { 'X-Rate-Limit-Remaining': '0', 'X-Rate-Limit-Reset': '0' } });

    const response = await deliver(resourceUrl);

    expect(response.status).toBe(200);
    expect(ctx.shipStation.calls).toHaveLength(2);
    expect(woo().get(260).status).toBe('shipped');
  });

  it('when the headers say the window is used up, the next delivery does not call ShipStation', async () => {
    woo().seed({ id: 261, status: 'processing' });
    woo().seed({ id: 262, status: 'processing' });
    ctx.shipStation.addBatch('41', [{ orderNumber: '261', trackingNumber: 'T', carrierCode: 'ups', shipDate: null }]);
    ctx.shipStation.addBatch('42', [{ orderNumber: '262', trackingNumber: 'T', carrierCode: 'ups', shipDate: null }]);
    ctx.shipStation.remaining = 1;
    ctx.shipStation.resetSeconds = 50;

    await deliver(`${SHIPSTATION_BASE_URL}/shipments?batchId=41`);
    const response = await deliver(`${SHIPSTATION_BASE_URL}/shipments?batchId=42`);

    expect(response.status).toBe(200);
    expect(ctx.shipStation.calls).toHaveLength(1);
    expect(woo().get(261).status).toBe('shipped');
    expect(woo().get(262).status).toBe('processing');
    expect(loggedLines()).toContainEqual(expect.objectContaining({ event: 'shipping.resource_read_failed', failure: 'rate_limited' }));
  });

  it('a second 429 gives up', async () => {
    ctx.shipStation.answerNext(
      { status: 429, headers: { 'X-Rate-Limit-Reset': '0' } },
      { status: 429, headers: { 'X-Rate-Limit-Reset': '0' } },
    );

    const response = await deliver(`${SHIPSTATION_BASE_URL}/shipments?batchId=43`);

    expect(response.status).toBe(200);
    expect(ctx.shipStation.calls).toHaveLength(2);
    expect(loggedLines()).toContainEqual(expect.objectContaining({ event: 'shipping.resource_read_failed', failure: 'rate_limited', status: 429 }));
  });
});

describe.skipIf(noRedis)(`with Redis, the rate limit is counted before ShipStation is called${noRedis ? ` (skipped: ${REDIS_SKIP_REASON})` : ''}`, () => {
  it('a client over its limit gets 429 for a resource_url delivery, and ShipStation is never asked', async () => {
    // The hit is noted by the route and would ride in the order lock's script; ShipStation comes before any lock.
    useTestEnv({ ...SHIPSTATION_ENV, REDIS_URL, REDIS_KEY_PREFIX: testPrefix('shipstation-limit') });
    woo().seed({ id: 241, status: 'processing' });
    const resourceUrl = ctx.shipStation.addBatch('24100000', [{ orderNumber: '241', trackingNumber: '1Z241', carrierCode: 'ups', shipDate: '2026-05-01' }]);
    await awayFromWindowEdge();
    const ip = freshIp();
    const post = (body: Record<string, unknown>) => POST(postJson('/api/shipping/webhook', body, { origin: null, ip }));
    for (let i = 0; i < 100; i += 1) expect((await post({ resource_type: 'ORDER_NOTIFY' })).status).toBe(200);
    expect((await post({ resource_url: resourceUrl, resource_type: 'SHIP_NOTIFY' })).status).toBe(429);
    expect(ctx.shipStation.calls).toEqual([]);
    expect(woo().get(241).status).toBe('processing');
  });
});
