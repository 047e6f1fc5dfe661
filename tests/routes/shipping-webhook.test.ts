/**
 * POST /api/shipping/webhook with inline payloads (docs/contract.md#spec-4-4, docs/decisions.md#d9, docs/decisions.md#d11, docs/decisions.md#d12):
 * every row of 4.4, the status fallback and its memory, the shared secret,
 * exactly-once delivery, and what reaches the store and the log.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { POST } from '@/app/api/shipping/webhook/route';
import { POST as aliasPOST } from '@/app/api/shipstation/webhook/route';
import { SHIPPED_MISSING_TTL_MS } from '@/lib/shared-state/shipped-status';
import { useTestEnv } from '../support/env';
import { awayFromWindowEdge, freshIp, postJson } from '../support/requests';
import { loggedLines } from '../support/setup';
import { useShippingProviders } from '../support/shipstation';

const ctx = useShippingProviders();
const woo = () => ctx.providers.woo;

const ISO_TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const WEBHOOK_SECRET = 'shipping-webhook-secret-5f0c2a91';

function ship(body: unknown, options: { ip?: string; headers?: Record<string, string>; query?: string; path?: string } = {}) {
  const path = `${options.path ?? '/api/shipping/webhook'}${options.query ?? ''}`;
  const request = postJson(path, body, { origin: null, ip: options.ip, headers: options.headers });
  return options.path === '/api/shipstation/webhook' ? aliasPOST(request) : POST(request);
}

function storeCalls() {
  return ctx.providers.callsTo('store');
}

/** The four tracking meta entries the last update appended, by key. */
function appendedMeta(update: Record<string, unknown>, existing = 0): Record<string, unknown> {
  const entries = (update.meta_data as { key: string; value: unknown }[]).slice(existing);
  return Object.fromEntries(entries.map((e) => [e.key, e.value]));
}

beforeEach(() => {
  useTestEnv();
});

afterEach(() => {
  vi.useRealTimers();
});

describe('shipped notifications mark the order shipped (spec 4.4 step 3)', () => {
  it('SHIP_NOTIFY on a processing order writes status shipped, the tracking note and the four meta keys', async () => {
    woo().seed({ id: 101, status: 'processing', meta_data: [{ key: '_payment_intent_id', value: 'pi_123' }] });
    const before = new Date().toISOString();

    const response = await ship({
      resource_type: 'SHIP_NOTIFY',
      order_number: '101',
      tracking_number: '1Z999AA10123456784',
      carrier: 'UPS',
      ship_date: '2026-05-01',
    });

    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ received: true });
    const updates = ctx.providers.orderUpdates(101);
    expect(updates).toHaveLength(1);
    const update = updates[0]!;
    expect(Object.keys(update).sort()).toEqual(['customer_note', 'meta_data', 'status']);
    expect(update.status).toBe('shipped');
    expect(update.customer_note).toBe(
      'Your order has been shipped! Tracking Number: 1Z999AA10123456784 | Carrier: UPS | Ship Date: 2026-05-01',
    );
    // Appended: the existing entry (with its id) first, then the four new ones in order.
    const meta = update.meta_data as { id?: number; key: string; value: string }[];
    expect(meta[0]).toEqual({ id: expect.any(Number), key: '_payment_intent_id', value: 'pi_123' });
    expect(meta.slice(1).map((m) => m.key)).toEqual([
      '_tracking_number',
      '_shipping_carrier',
      '_shipped_date',
      '_shipstation_webhook_received_at',
    ]);
    expect(appendedMeta(update, 1)).toMatchObject({
      _tracking_number: '1Z999AA10123456784',
      _shipping_carrier: 'UPS',
      _shipped_date: '2026-05-01',
    });
    const receivedAt = appendedMeta(update, 1)._shipstation_webhook_received_at as string;
    expect(receivedAt).toMatch(ISO_TIMESTAMP);
    expect(receivedAt >= before && receivedAt <= new Date().toISOString()).toBe(true);

    const order = woo().get(101);
    expect(order.status).toBe('shipped');
    expect(order.customer_note).toBe(update.customer_note);
    expect(order.meta_data.find((m) => m.key === '_tracking_number')?.value).toBe('1Z999AA10123456784');
    expect(order.meta_data.find((m) => m.key === '_payment_intent_id')?.value).toBe('pi_123');
  });

  it.each(['ITEM_SHIPPED', 'ITEM_SHIP_NOTIFY'])('%s on an awaiting_shipment order marks it shipped', async (type) => {
    woo().seed({ id: 102, status: 'awaiting_shipment' });

    const response = await ship({ resource_type: type, order_number: '102', tracking_number: '9400100000000000000000', carrier: 'USPS' });

    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ received: true });
    const [update] = ctx.providers.orderUpdates(102);
    expect(update?.status).toBe('shipped');
    expect(update?.customer_note).toBe('Your order has been shipped! Tracking Number: 9400100000000000000000 | Carrier: USPS');
    expect(woo().get(102).status).toBe('shipped');
  });

  it.each([
    [{}, 'Your order has been shipped!'],
    [{ tracking_number: 'TRK1' }, 'Your order has been shipped! Tracking Number: TRK1'],
    [{ carrier: 'FedEx' }, 'Your order has been shipped! Carrier: FedEx'],
    [{ ship_date: '2026-05-02' }, 'Your order has been shipped! Ship Date: 2026-05-02'],
    [{ tracking_number: 'TRK2', ship_date: '2026-05-03' }, 'Your order has been shipped! Tracking Number: TRK2 | Ship Date: 2026-05-03'],
    [{ carrier: 'DHL', ship_date: '2026-05-04' }, 'Your order has been shipped! Carrier: DHL | Ship Date: 2026-05-04'],
    [{ tracking_number: '', carrier: null }, 'Your order has been shipped!'],
  ])('the note names only the details present: %j', async (details, note) => {
    woo().seed({ id: 103, status: 'processing' });

    await ship({ resource_type: 'SHIP_NOTIFY', order_number: '103', ...details });

    const [update] = ctx.providers.orderUpdates(103);
    expect(update?.customer_note).toBe(note);
    expect(woo().get(103).customer_note).toBe(note);
  });

  it('without details the meta holds empty tracking and carrier and the current time as ship date', async () => {
    woo().seed({ id: 104, status: 'processing' });
    const before = new Date().toISOString();

    await ship({ resource_type: 'SHIP_NOTIFY', order_number: '104' });

    const meta = appendedMeta(ctx.providers.orderUpdates(104)[0]!);
    expect(meta._tracking_number).toBe('');
    expect(meta._shipping_carrier).toBe('');
    expect(meta._shipped_date).toMatch(ISO_TIMESTAMP);
    expect((meta._shipped_date as string) >= before).toBe(true);
    expect(meta._shipstation_webhook_received_at).toBe(meta._shipped_date);
  });

  it('the alias /api/shipstation/webhook serves the same handler', async () => {
    woo().seed({ id: 105, status: 'processing' });

    const response = await ship({ resource_type: 'SHIP_NOTIFY', order_number: '105', carrier: 'UPS' }, { path: '/api/shipstation/webhook' });

    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ received: true });
    expect(woo().get(105).status).toBe('shipped');
    expect(woo().get(105).customer_note).toBe('Your order has been shipped! Carrier: UPS');
  });
});

describe('notifications with no effect are answered 200', () => {
  it.each(['ORDER_NOTIFY', 'ITEM_ORDER_NOTIFY'])('%s is logged only', async (type) => {
    woo().seed({ id: 110, status: 'processing' });

    const response = await ship({ resource_type: type, order_number: '110', tracking_number: 'TRK' });

    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ received: true });
    expect(storeCalls()).toHaveLength(0);
    expect(woo().get(110).status).toBe('processing');
    expect(loggedLines()).toContainEqual(expect.objectContaining({ event: 'shipping.order_notification', eventType: type }));
  });

  it('an unknown notification type touches nothing', async () => {
    woo().seed({ id: 111, status: 'processing' });

    const response = await ship({ resource_type: 'FULFILLMENT_SHIPPED <script>call +1 555 0100</script>', order_number: '111' });

    expect(response.status).toBe(200);
    expect(storeCalls()).toHaveLength(0);
    expect(loggedLines()).toContainEqual(
      expect.objectContaining({ event: 'request', outcome: 'ignored_event_type', eventType: 'unknown' }),
    );
    // The sender's own text never reaches a log line (nor the trace, which takes the same field).
    expect(JSON.stringify(loggedLines())).not.toContain('FULFILLMENT_SHIPPED');
  });

  it.each([
    ['missing', {}],
    ['empty', { order_number: '' }],
    ['null', { order_number: null }],
    ['letters', { order_number: 'abc' }],
    ['digits and letters', { order_number: '12a' }],
    ['negative', { order_number: '-5' }],
    ['zero', { order_number: '0' }],
    ['decimal', { order_number: '1.5' }],
    ['padded', { order_number: ' 120' }],
    ['a JSON number', { order_number: 120 }],
    ['too long', { order_number: '1234567890123456' }],
  ])('a %s order number has no effect', async (_label, orderNumber) => {
    woo().seed({ id: 120, status: 'processing' });

    const response = await ship({ resource_type: 'SHIP_NOTIFY', tracking_number: 'TRK', ...orderNumber });

    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ received: true });
    expect(storeCalls()).toHaveLength(0);
    expect(woo().get(120).status).toBe('processing');
    expect(loggedLines()).toContainEqual(expect.objectContaining({ event: 'request', status: 200, outcome: 'bad_order_number' }));
  });

  it('an unknown order is fetched once and nothing is written', async () => {
    const response = await ship({ resource_type: 'SHIP_NOTIFY', order_number: '999', tracking_number: 'TRK' });

    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ received: true });
    expect(ctx.providers.callsTo('store', 'GET')).toHaveLength(1);
    expect(ctx.providers.orderUpdates()).toHaveLength(0);
    expect(loggedLines()).toContainEqual(
      expect.objectContaining({ event: 'shipping.order_fetch_failed', orderId: 999, failure: 'not_found', status: 404 }),
    );
  });

  it.each(['pending', 'on-hold', 'completed', 'shipped', 'cancelled', 'refunded', 'failed', 'checkout-draft'])(
    'an order in status %s is left alone',
    async (status) => {
      woo().seed({ id: 130, status });

      const response = await ship({ resource_type: 'SHIP_NOTIFY', order_number: '130', tracking_number: 'TRK' });

      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({ received: true });
      expect(ctx.providers.callsTo('store', 'GET')).toHaveLength(1);
      expect(ctx.providers.orderUpdates()).toHaveLength(0);
      expect(woo().get(130).status).toBe(status);
      expect(woo().get(130).customer_note).toBe('');
    },
  );
});

describe('details that reach the customer note are plain, bounded text (DECISIONS 11)', () => {
  it.each([
    ['markup', { carrier: '<a href="https://evil.example">Track</a>' }, 'carrier', 'not_plain_text'],
    ['a link', { tracking_number: 'https://evil.example/x' }, 'trackingNumber', 'not_plain_text'],
    ['a host name', { carrier: 'Visit shop-refunds.example now' }, 'carrier', 'looks_like_link'],
    ['www.', { carrier: 'www dot www.example' }, 'carrier', 'looks_like_link'],
    ['a control character', { tracking_number: '1Z999\u0000' }, 'trackingNumber', 'not_plain_text'],
    ['a line break', { ship_date: '2026-05-01\nYour card was declined' }, 'shipDate', 'not_plain_text'],
    ['prose in a tracking number', { tracking_number: 'Card declined: call +1 800 555 0100' }, 'trackingNumber', 'not_plain_text'],
    ['an oversized carrier', { carrier: 'x'.repeat(201) }, 'carrier', 'too_long'],
    ['an oversized tracking number', { tracking_number: '1'.repeat(65) }, 'trackingNumber', 'too_long'],
  ])('%s counts as absent: the order ships without it, and the log names the field, never the value', async (_label, details, field, reason) => {
    woo().seed({ id: 150, status: 'processing' });
    const payload = { resource_type: 'SHIP_NOTIFY', order_number: '150', ship_date: '2026-05-05', ...details };

    const response = await ship(payload);

    expect(response.status).toBe(200);
    const [update] = ctx.providers.orderUpdates(150);
    expect(update?.status).toBe('shipped');
    const note = String(update?.customer_note);
    for (const value of Object.values(details)) expect(note).not.toContain(value);
    expect(note).not.toMatch(/[<>]|:\/\/|www\.|[\u0000-\u001f]/);
    const meta = appendedMeta(update!);
    expect(JSON.stringify(meta)).not.toContain(Object.values(details)[0]);
    const line = loggedLines().find((l) => l.event === 'shipping.detail_refused');
    expect(line).toMatchObject({ orderId: 150, field, reason });
    expect(JSON.stringify(loggedLines())).not.toContain(Object.values(details)[0]);
  });

  it('keeps ordinary tracking numbers, carrier names and dates', async () => {
    woo().seed({ id: 151, status: 'processing' });

    await ship({ resource_type: 'SHIP_NOTIFY', order_number: '151', tracking_number: '1Z 999 AA1-0123456784', carrier: 'U.S. Postal Service', ship_date: '2026-05-01T12:00:00.000Z' });

    expect(ctx.providers.orderUpdates(151)[0]?.customer_note).toBe(
      'Your order has been shipped! Tracking Number: 1Z 999 AA1-0123456784 | Carrier: U.S. Postal Service | Ship Date: 2026-05-01T12:00:00.000Z',
    );
    expect(loggedLines().some((l) => l.event === 'shipping.detail_refused')).toBe(false);
  });
});

describe('invalid payloads are logged and answered 200 with no store call (spec 4.4 step 2)', () => {
  it.each([
    ['malformed JSON', '{"resource_type": "SHIP_NOTIFY", "order_number": "140"', 'json'],
    ['an empty body', '', 'json'],
    ['a JSON array', '[{"resource_type":"SHIP_NOTIFY","order_number":"140"}]', 'schema'],
    ['a JSON string', '"SHIP_NOTIFY"', 'schema'],
    ['no resource_type', '{"order_number":"140"}', 'schema'],
    ['a numeric tracking number', '{"resource_type":"SHIP_NOTIFY","order_number":"140","tracking_number":12345}', 'schema'],
  ])('%s', async (_label, body, reason) => {
    woo().seed({ id: 140, status: 'processing' });

    const response = await ship(body);

    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ received: true });
    expect(storeCalls()).toHaveLength(0);
    expect(woo().get(140).status).toBe('processing');
    expect(loggedLines()).toContainEqual(expect.objectContaining({ event: 'shipping.invalid_payload', reason }));
  });

  it('the invalid-payload log line names fields, never their values', async () => {
    await ship({ resource_type: 'SHIP_NOTIFY', order_number: '140', tracking_number: 424242, carrier: { secret: 'sensitive-value' } });

    const line = loggedLines().find((l) => l.event === 'shipping.invalid_payload');
    expect(line).toMatchObject({ reason: 'schema', fields: 'tracking_number,carrier' });
    expect(JSON.stringify(loggedLines())).not.toContain('sensitive-value');
    expect(JSON.stringify(loggedLines())).not.toContain('424242');
  });

  it('a body over 512 KiB is refused with 413 and not read', async () => {
    const response = await ship({ resource_type: 'SHIP_NOTIFY', order_number: '140', carrier: 'x'.repeat(600 * 1024) });

    expect(response.status).toBe(413);
    expect(await response.json()).toEqual({ error: 'Payload too large' });
    expect(storeCalls()).toHaveLength(0);
  });
});

describe('status fallback when the store has no shipped status (DECISIONS 9)', () => {
  beforeEach(() => {
    woo().removeStatus('shipped');
  });

  it('writes the same update with completed after the store refuses shipped', async () => {
    woo().seed({ id: 150, status: 'processing' });

    const response = await ship({ resource_type: 'SHIP_NOTIFY', order_number: '150', tracking_number: 'TRK150', carrier: 'UPS' });

    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ received: true });
    const updates = ctx.providers.orderUpdates(150);
    expect(updates.map((u) => u.status)).toEqual(['shipped', 'completed']);
    expect({ ...updates[1], status: 'shipped' }).toEqual(updates[0]);
    const order = woo().get(150);
    expect(order.status).toBe('completed');
    expect(order.customer_note).toBe('Your order has been shipped! Tracking Number: TRK150 | Carrier: UPS');
    expect(order.meta_data.filter((m) => m.key.startsWith('_ship') || m.key.startsWith('_track')).map((m) => m.key)).toEqual([
      '_tracking_number',
      '_shipping_carrier',
      '_shipped_date',
      '_shipstation_webhook_received_at',
    ]);
    expect(loggedLines()).toContainEqual(expect.objectContaining({ event: 'shipping.status_fallback', orderId: 150 }));
    expect(loggedLines()).toContainEqual(expect.objectContaining({ event: 'request', outcome: 'completed_fallback' }));
  });

  it('remembers that shipped is missing: the next notification costs one write', async () => {
    woo().seed({ id: 151, status: 'processing' });
    woo().seed({ id: 152, status: 'awaiting_shipment' });

    await ship({ resource_type: 'SHIP_NOTIFY', order_number: '151' });
    await ship({ resource_type: 'SHIP_NOTIFY', order_number: '152' });

    expect(ctx.providers.orderUpdates(151).map((u) => u.status)).toEqual(['shipped', 'completed']);
    expect(ctx.providers.orderUpdates(152).map((u) => u.status)).toEqual(['completed']);
    expect(woo().get(152).status).toBe('completed');
  });

  it('forgets after a few minutes, so a status plugin installed meanwhile is used', async () => {
    vi.useFakeTimers({ toFake: ['Date'], now: new Date('2026-05-01T12:00:00Z') });
    woo().seed({ id: 153, status: 'processing' });
    woo().seed({ id: 154, status: 'processing' });
    await ship({ resource_type: 'SHIP_NOTIFY', order_number: '153' });

    woo().addStatus('shipped');
    vi.setSystemTime(new Date(Date.now() + SHIPPED_MISSING_TTL_MS + 1000));
    await ship({ resource_type: 'SHIP_NOTIFY', order_number: '154' });

    expect(ctx.providers.orderUpdates(154).map((u) => u.status)).toEqual(['shipped']);
    expect(woo().get(154).status).toBe('shipped');
  });

  it('a refusal of anything but an unknown status is not retried with completed', async () => {
    woo().addStatus('shipped');
    woo().seed({ id: 155, status: 'processing' });
    ctx.providers.failStore('PUT', /\/orders\/155$/, 400, 'woocommerce_rest_cannot_edit');

    const response = await ship({ resource_type: 'SHIP_NOTIFY', order_number: '155' });

    expect(response.status).toBe(200);
    expect(ctx.providers.orderUpdates(155).map((u) => u.status)).toEqual(['shipped']);
    expect(woo().get(155).status).toBe('processing');
  });
});

describe('store failures are answered 200 (spec 4.4 step 3)', () => {
  it('an order fetch failure writes nothing', async () => {
    woo().seed({ id: 160, status: 'processing' });
    ctx.providers.failStore('GET', /\/orders\/160$/, 503, 'internal_server_error', 2);

    const response = await ship({ resource_type: 'SHIP_NOTIFY', order_number: '160' });

    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ received: true });
    expect(ctx.providers.orderUpdates()).toHaveLength(0);
    expect(woo().get(160).status).toBe('processing');
    expect(loggedLines()).toContainEqual(expect.objectContaining({ event: 'shipping.order_fetch_failed', failure: 'unavailable' }));
  });

  it('an update failure leaves the order as it was', async () => {
    woo().seed({ id: 161, status: 'processing' });
    ctx.providers.failStore('PUT', /\/orders\/161$/, 500, 'internal_server_error');

    const response = await ship({ resource_type: 'SHIP_NOTIFY', order_number: '161', tracking_number: 'TRK' });

    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ received: true });
    expect(ctx.providers.orderUpdates(161)).toHaveLength(1);
    expect(woo().get(161).status).toBe('processing');
    expect(loggedLines()).toContainEqual(expect.objectContaining({ event: 'request', status: 200, outcome: 'update_failed' }));
  });

  it('a failure of the completed fallback too is answered 200', async () => {
    woo().removeStatus('shipped');
    woo().seed({ id: 162, status: 'processing' });
    ctx.providers.failStore('PUT', /\/orders\/162$/, 400, 'rest_invalid_param');
    ctx.providers.failStore('PUT', /\/orders\/162$/, 502, 'bad_gateway');

    const response = await ship({ resource_type: 'SHIP_NOTIFY', order_number: '162' });

    expect(response.status).toBe(200);
    expect(ctx.providers.orderUpdates(162).map((u) => u.status)).toEqual(['shipped', 'completed']);
    expect(woo().get(162).status).toBe('processing');
  });

  it('an unconfigured store is answered 200 and logged', async () => {
    useTestEnv({ WOOCOMMERCE_URL: undefined });

    const response = await ship({ resource_type: 'SHIP_NOTIFY', order_number: '163' });

    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ received: true });
    expect(storeCalls()).toHaveLength(0);
    expect(loggedLines()).toContainEqual(expect.objectContaining({ event: 'request', status: 200, error: 'not_configured' }));
  });
});

describe('exactly once (DECISIONS 12)', () => {
  const notification = { resource_type: 'SHIP_NOTIFY', order_number: '170', tracking_number: 'TRK170', carrier: 'UPS' };

  it('the same notification delivered twice writes once', async () => {
    woo().seed({ id: 170, status: 'processing' });

    const first = await ship(notification);
    const second = await ship(notification);

    expect([first.status, second.status]).toEqual([200, 200]);
    expect(await second.json()).toEqual({ received: true });
    expect(ctx.providers.orderUpdates(170)).toHaveLength(1);
    expect(woo().get(170).meta_data.filter((m) => m.key === '_shipstation_webhook_received_at')).toHaveLength(1);
  });

  it('concurrent deliveries write once', async () => {
    woo().seed({ id: 170, status: 'processing' });

    const responses = await Promise.all([ship(notification), ship(notification), ship(notification)]);

    expect(responses.map((r) => r.status)).toEqual([200, 200, 200]);
    expect(ctx.providers.orderUpdates(170)).toHaveLength(1);
    expect(woo().get(170).status).toBe('shipped');
  });

  it('concurrent deliveries with the completed fallback write once (after the one refused write)', async () => {
    woo().removeStatus('shipped');
    woo().seed({ id: 170, status: 'processing' });

    await Promise.all([ship(notification), ship(notification), ship(notification)]);

    expect(ctx.providers.orderUpdates(170).map((u) => u.status)).toEqual(['shipped', 'completed']);
    expect(woo().get(170).status).toBe('completed');
  });
});

describe('rate limit (spec 8)', () => {
  it('the 101st request in a minute from one address gets 429 and does nothing', async () => {
    woo().seed({ id: 180, status: 'processing' });
    const ip = freshIp();
    await awayFromWindowEdge();
    for (let i = 0; i < 100; i += 1) {
      const ok = await ship({ resource_type: 'ORDER_NOTIFY' }, { ip });
      expect(ok.status).toBe(200);
    }

    const response = await ship({ resource_type: 'SHIP_NOTIFY', order_number: '180' }, { ip });

    expect(response.status).toBe(429);
    expect(await response.json()).toEqual({ error: 'Too many requests' });
    expect(response.headers.get('x-ratelimit-limit')).toBeNull();
    expect(storeCalls()).toHaveLength(0);
    expect(woo().get(180).status).toBe('processing');
    // Another address has its own counter.
    expect((await ship({ resource_type: 'SHIP_NOTIFY', order_number: '180' })).status).toBe(200);
    expect(woo().get(180).status).toBe('shipped');
  });

  it('the alias shares the counter of the canonical route', async () => {
    const ip = freshIp();
    await awayFromWindowEdge();
    for (let i = 0; i < 100; i += 1) await ship({ resource_type: 'ORDER_NOTIFY' }, { ip });

    const response = await ship({ resource_type: 'ORDER_NOTIFY' }, { ip, path: '/api/shipstation/webhook' });

    expect(response.status).toBe(429);
  });
});

describe('shared secret (DECISIONS 11)', () => {
  beforeEach(() => {
    useTestEnv({ SHIPPING_WEBHOOK_SECRET: WEBHOOK_SECRET });
    woo().seed({ id: 190, status: 'processing' });
  });
  const notification = { resource_type: 'SHIP_NOTIFY', order_number: '190', carrier: 'UPS' };

  it('is accepted as the secret query parameter', async () => {
    const response = await ship(notification, { query: `?secret=${WEBHOOK_SECRET}` });

    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ received: true });
    expect(woo().get(190).status).toBe('shipped');
  });

  it('is accepted as the x-webhook-secret header', async () => {
    const response = await ship(notification, { headers: { 'x-webhook-secret': WEBHOOK_SECRET } });

    expect(response.status).toBe(200);
    expect(woo().get(190).status).toBe('shipped');
  });

  it.each([
    ['missing', {}],
    ['wrong in the query', { query: '?secret=shipping-webhook-secret-5f0c2a92' }],
    ['a prefix of it', { query: `?secret=${WEBHOOK_SECRET.slice(0, -1)}` }],
    ['wrong in the header', { headers: { 'x-webhook-secret': 'not-the-secret' } }],
    ['empty', { query: '?secret=' }],
  ])('%s gets 401 and has no effect', async (_label, options) => {
    const response = await ship(notification, options);

    expect(response.status).toBe(401);
    expect(await response.json()).toEqual({ error: 'Unauthorized' });
    expect(storeCalls()).toHaveLength(0);
    expect(woo().get(190).status).toBe('processing');
  });

  it('is checked before the body is parsed: a wrong secret with a broken body is 401, not the invalid-payload 200', async () => {
    const response = await ship('{not json', { query: '?secret=wrong' });

    expect(response.status).toBe(401);
    expect(loggedLines().some((l) => l.event === 'shipping.invalid_payload')).toBe(false);
  });

  it('comes after the rate limit: an over-limit sender gets 429 whatever it carries', async () => {
    const ip = freshIp();
    await awayFromWindowEdge();
    for (let i = 0; i < 100; i += 1) await ship({ resource_type: 'ORDER_NOTIFY' }, { ip });

    expect((await ship(notification, { ip })).status).toBe(429);
    expect((await ship(notification, { ip, query: `?secret=${WEBHOOK_SECRET}` })).status).toBe(429);
  });

  it('never appears in a log line', async () => {
    await ship(notification, { query: `?secret=${WEBHOOK_SECRET}` });
    await ship(notification, { headers: { 'x-webhook-secret': `${WEBHOOK_SECRET}x` } });

    expect(loggedLines().length).toBeGreaterThan(0);
    expect(JSON.stringify(loggedLines())).not.toContain(WEBHOOK_SECRET);
  });
});

describe('the request log line', () => {
  it('names route, status, order id, event type and outcome', async () => {
    woo().seed({ id: 195, status: 'processing' });

    await ship({ resource_type: 'SHIP_NOTIFY', order_number: '195', tracking_number: 'TRK195' });

    expect(loggedLines()).toContainEqual(
      expect.objectContaining({
        event: 'request',
        route: '/api/shipping/webhook',
        status: 200,
        orderId: 195,
        eventType: 'SHIP_NOTIFY',
        outcome: 'shipped',
        durationMs: expect.any(Number),
      }),
    );
  });
});
