/**
 * Every package tracked: the first shipment ships the order (the spec); a
 * later package of a shipped order (another shipment id or tracking number)
 * adds its tracking to `_shipment_packages` and a line to the customer note,
 * once however often it comes; a voided shipment gets a private note and ships
 * nothing. SHIPMENT_TRACKING_META=on also writes WooCommerce Shipment
 * Tracking's `_wc_shipment_tracking_items`; off (the default) writes none.
 */
import { createHash } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { POST } from '@/app/api/shipping/webhook/route';
import { getServices, resetServices, type Services } from '@/lib/services';
import { handleShippingNotification } from '@/lib/webhooks/shipping/handle-notification';
import { freePort } from '@/stand-ins/loopback-http';
import { useTestEnv } from '../support/env';
import { loggedLines } from '../support/setup';
import { postJson } from '../support/requests';
import { useShippingProviders } from '../support/shipstation';

const ctx = useShippingProviders();
const woo = () => ctx.providers.woo;

beforeEach(() => {
  useTestEnv();
});

function ship(orderId: number, details: Record<string, unknown>) {
  return POST(postJson('/api/shipping/webhook', { resource_type: 'SHIP_NOTIFY', order_number: String(orderId), carrier: 'ups', ...details }, { origin: null }));
}

const meta = (orderId: number, key: string) => woo().get(orderId).meta_data.find((m) => m.key === key)?.value;
const packages = (orderId: number) => JSON.parse(String(meta(orderId, '_shipment_packages') ?? '[]')) as { key: string; tracking_number: string; voided?: true }[];

describe('a second package', () => {
  it('adds its tracking number, carrier and date to the meta and the customer note; the order stays shipped', async () => {
    woo().seed({ id: 3201, status: 'processing' });
    await ship(3201, { shipment_id: 11, tracking_number: 'PKG-A', ship_date: '2026-05-01' });
    await ship(3201, { shipment_id: 12, tracking_number: 'PKG-B', carrier: 'fedex', ship_date: '2026-05-02' });

    const order = woo().get(3201);
    expect(order.status).toBe('shipped');
    expect(order.customer_note).toBe(
      'Your order has been shipped! Tracking Number: PKG-A | Carrier: ups | Ship Date: 2026-05-01\n' +
        'Another package of your order has been shipped! Tracking Number: PKG-B | Carrier: fedex | Ship Date: 2026-05-02',
    );
    // The list holds the later packages; the spec's four keys still name the first one.
    expect(packages(3201)).toEqual([{ key: 'shipment:12', tracking_number: 'PKG-B', carrier: 'fedex', ship_date: '2026-05-02' }]);
    expect(meta(3201, '_tracking_number')).toBe('PKG-A');
    expect(meta(3201, '_wc_shipment_tracking_items')).toBeUndefined();
  });

  it('is added once: the same package again, and twice at once, is written once', async () => {
    woo().seed({ id: 3202, status: 'processing' });
    await ship(3202, { shipment_id: 21, tracking_number: 'FIRST' });
    const before = ctx.providers.orderUpdates(3202).length;
    const modified = () => woo().get(3202).date_modified;
    let changes = 0;
    let last = modified();
    const deliveries = [
      () => Promise.all([ship(3202, { shipment_id: 22, tracking_number: 'SECOND' }), ship(3202, { shipment_id: 22, tracking_number: 'SECOND' })]),
      () => ship(3202, { shipment_id: 22, tracking_number: 'SECOND' }),
      // The first package again, by its id or its tracking number, adds nothing either.
      () => ship(3202, { shipment_id: 21, tracking_number: 'FIRST' }),
      () => ship(3202, { tracking_number: 'FIRST' }),
    ];
    for (const deliver of deliveries) {
      woo().settings.now = () => new Date(Date.parse('2026-06-01T00:00:00Z') + 60_000 * (changes + 1));
      await deliver();
      if (modified() !== last) changes += 1;
      last = modified();
    }

    expect(changes).toBe(1);
    expect(ctx.providers.orderUpdates(3202)).toHaveLength(before);
    expect(packages(3202).map((p) => p.tracking_number)).toEqual(['SECOND']);
    expect(woo().get(3202).customer_note.match(/SECOND/g)).toHaveLength(1);
  });

  it('an order shipped by hand, with no package recorded, is left alone as the spec says', async () => {
    woo().seed({ id: 3203, status: 'shipped' });
    await ship(3203, { shipment_id: 31, tracking_number: 'LATE' });
    expect(ctx.providers.orderUpdates(3203)).toHaveLength(0);
  });
});

describe('SHIPMENT_TRACKING_META=on', () => {
  const id = (tracking: string) => createHash('md5').update(`tracking:${tracking}`).digest('hex');

  it("writes each package as an item of WooCommerce Shipment Tracking's list, keeping the shop's own items", async () => {
    useTestEnv({ SHIPMENT_TRACKING_META: 'on' });
    const own = { tracking_provider: 'usps', custom_tracking_provider: '', custom_tracking_link: '', tracking_number: 'BYHAND', date_shipped: 1777000000, tracking_id: 'abc' };
    woo().seed({ id: 3211, status: 'processing', meta_data: [{ key: '_wc_shipment_tracking_items', value: [own] }] });
    await ship(3211, { shipment_id: 41, tracking_number: 'TA', ship_date: '2026-05-01' });
    await ship(3211, { shipment_id: 42, tracking_number: 'TB', carrier: 'fedex', ship_date: '2026-05-02' });
    await ship(3211, { shipment_id: 42, tracking_number: 'TB', carrier: 'fedex', ship_date: '2026-05-02' });

    expect(meta(3211, '_wc_shipment_tracking_items')).toEqual([
      own,
      { tracking_provider: '', custom_tracking_provider: 'ups', custom_tracking_link: '', tracking_number: 'TA', date_shipped: Date.parse('2026-05-01') / 1000, tracking_id: id('TA') },
      { tracking_provider: '', custom_tracking_provider: 'fedex', custom_tracking_link: '', tracking_number: 'TB', date_shipped: Date.parse('2026-05-02') / 1000, tracking_id: id('TB') },
    ]);
  });

  it('a voided package loses its tracking item', async () => {
    useTestEnv({ SHIPMENT_TRACKING_META: 'on' });
    woo().seed({ id: 3212, status: 'processing' });
    await ship(3212, { shipment_id: 51, tracking_number: 'KEEP' });
    await ship(3212, { shipment_id: 52, tracking_number: 'VOID' });
    await ship(3212, { shipment_id: 52, tracking_number: 'VOID', voided: true });
    const items = meta(3212, '_wc_shipment_tracking_items') as { tracking_number: string }[];
    expect(items.map((item) => item.tracking_number)).toEqual(['KEEP']);
    expect(woo().get(3212).status).toBe('shipped');
  });
});

describe('a voided shipment', () => {
  it('is noted privately, once, and ships nothing', async () => {
    woo().seed({ id: 3221, status: 'processing' });
    await ship(3221, { shipment_id: 61, tracking_number: 'VOIDED', voided: true });
    await ship(3221, { shipment_id: 61, tracking_number: 'VOIDED', voided: true });

    const order = woo().get(3221);
    expect(order.status).toBe('processing');
    expect(order.customer_note).toBe('');
    expect(woo().listNotes(3221)).toEqual([
      expect.objectContaining({
        note: 'ShipStation voided a shipment (61) (tracking number VOIDED): its label was cancelled, nothing was shipped with it.',
        customer_note: false,
      }),
    ]);
    expect(packages(3221)).toEqual([expect.objectContaining({ key: 'shipment:61', voided: true })]);

    // The replacement label then ships the order as its first package.
    await ship(3221, { shipment_id: 62, tracking_number: 'REAL' });
    expect(woo().get(3221)).toMatchObject({ status: 'shipped', customer_note: 'Your order has been shipped! Tracking Number: REAL | Carrier: ups' });
  });
});

describe('no package lost with Redis down', () => {
  /** Two instances whose Redis is down: each falls back to its own lock, so neither sees the other's. */
  async function twoInstancesWithRedisDown(): Promise<[Services, Services]> {
    const env = { REDIS_URL: `redis://127.0.0.1:${await freePort()}`, REDIS_TIMEOUT_MS: '300' };
    useTestEnv(env);
    const a = getServices();
    useTestEnv(env);
    const b = getServices();
    expect(b).not.toBe(a);
    return [a, b];
  }

  const notice = (orderId: number, shipmentId: number, tracking: string) =>
    JSON.stringify({ resource_type: 'SHIP_NOTIFY', order_number: String(orderId), shipment_id: shipmentId, tracking_number: tracking, carrier: 'ups', ship_date: '2026-05-02' });

  /**
   * Both deliveries have read the order before either writes: the store holds each write (through the
   * plugin's merge, or the spec's PUT) until both have arrived, then lets both through.
   */
  async function deliverTogether(orderId: number, first: [Services, string], second: [Services, string]): Promise<void> {
    const hold = (method: string, path: RegExp) => [ctx.providers.holdStore(method, path), ctx.providers.holdStore(method, path)];
    const writes = [...hold('POST', new RegExp(`/orders/${orderId}/shipment-packages$`)), ...hold('PUT', new RegExp(`/orders/${orderId}$`))];
    let arrived = 0;
    const bothWriting = new Promise<void>((resolve) => {
      for (const write of writes) void write.reached.then(() => (arrived += 1) === 2 && resolve());
    });
    const deliveries = [first, second].map(([services, body]) => handleShippingNotification(body, services, {}));
    await bothWriting;
    // A hold no write reached lets any later request straight through once released.
    for (const write of writes) write.release();
    await Promise.all(deliveries);
  }

  afterEach(() => {
    vi.restoreAllMocks();
    resetServices();
  });

  it('two instances receiving two different later packages at once both write theirs: both packages and both note lines, once', async () => {
    const [a, b] = await twoInstancesWithRedisDown();
    woo().seed({ id: 3231, status: 'processing' });
    await handleShippingNotification(notice(3231, 70, 'FIRST'), a, {});

    await deliverTogether(3231, [a, notice(3231, 71, 'SECOND')], [b, notice(3231, 72, 'THIRD')]);

    expect(loggedLines()).toContainEqual(expect.objectContaining({ event: 'redis.fallback_to_memory' }));
    expect(packages(3231).map((p) => p.key).sort()).toEqual(['shipment:71', 'shipment:72']);
    const note = woo().get(3231).customer_note;
    for (const tracking of ['FIRST', 'SECOND', 'THIRD']) expect(note.match(new RegExp(`Tracking Number: ${tracking} `, 'g'))).toHaveLength(1);
    expect(note.split('\n')).toHaveLength(3);
  });

  it('the same later package reaching both instances at once is written once', async () => {
    const [a, b] = await twoInstancesWithRedisDown();
    woo().seed({ id: 3232, status: 'processing' });
    await handleShippingNotification(notice(3232, 80, 'FIRST'), a, {});

    const writesBefore = ctx.providers.orderUpdates(3232).length;
    const merges = vi.spyOn(woo(), 'mergeShipmentPackage');

    await deliverTogether(3232, [a, notice(3232, 81, 'AGAIN')], [b, notice(3232, 81, 'AGAIN')]);

    // One write changed the order: a merge that added it, and no other write.
    const added = merges.mock.results.filter((result) => result.type === 'return' && (result.value as { added: boolean }).added);
    expect(added.length + ctx.providers.orderUpdates(3232).length - writesBefore).toBe(1);
    expect(packages(3232)).toEqual([{ key: 'shipment:81', tracking_number: 'AGAIN', carrier: 'ups', ship_date: '2026-05-02' }]);
    expect(woo().get(3232).customer_note.match(/AGAIN/g)).toHaveLength(1);
  });

  it('two different first packages reaching two instances at once: the order ships once, the other package is added as a later one', async () => {
    const [a, b] = await twoInstancesWithRedisDown();
    woo().seed({ id: 3234, status: 'processing' });

    await deliverTogether(3234, [a, notice(3234, 100, 'ONE')], [b, notice(3234, 101, 'TWO')]);

    const order = woo().get(3234);
    expect(order.status).toBe('shipped');
    const tracking = order.meta_data.filter((m) => m.key === '_tracking_number').map((m) => m.value);
    expect(tracking).toHaveLength(1);
    const later = tracking[0] === 'ONE' ? 'TWO' : 'ONE';
    expect(packages(3234).map((p) => p.tracking_number)).toEqual([later]);
    expect(order.customer_note.split('\n')).toEqual([
      expect.stringMatching(new RegExp(`^Your order has been shipped! Tracking Number: ${String(tracking[0])} `)),
      expect.stringMatching(new RegExp(`^Another package of your order has been shipped! Tracking Number: ${later} `)),
    ]);
  });

  it('the same first shipment reaching both instances at once ships the order once', async () => {
    const [a, b] = await twoInstancesWithRedisDown();
    woo().seed({ id: 3235, status: 'processing' });
    const merges = vi.spyOn(woo(), 'mergeShipmentPackage');

    await deliverTogether(3235, [a, notice(3235, 110, 'SAME')], [b, notice(3235, 110, 'SAME')]);

    const order = woo().get(3235);
    expect(order.status).toBe('shipped');
    expect(order.customer_note).toBe('Your order has been shipped! Tracking Number: SAME | Carrier: ups | Ship Date: 2026-05-02');
    expect(order.meta_data.filter((m) => m.key === '_tracking_number')).toHaveLength(1);
    const changed = merges.mock.results.filter((result) => result.type === 'return' && (result.value as { added: boolean }).added);
    expect(changed.length + ctx.providers.orderUpdates(3235).length).toBe(1);
  });

  it('through the merge too, a store without the `shipped` status gets `completed`', async () => {
    const [a] = await twoInstancesWithRedisDown();
    woo().removeStatus('shipped');
    woo().seed({ id: 3236, status: 'processing' });
    await handleShippingNotification(notice(3236, 120, 'DONE'), a, {});
    expect(woo().get(3236)).toMatchObject({ status: 'completed', customer_note: expect.stringContaining('Tracking Number: DONE') });
    expect(loggedLines()).toContainEqual(expect.objectContaining({ event: 'shipping.status_fallback', orderId: 3236 }));
  });

  it('a store without the merge route (an older companion plugin) gets the list it read written back', async () => {
    woo().cartBridgeInstalled = false;
    woo().seed({ id: 3233, status: 'processing' });
    await ship(3233, { shipment_id: 90, tracking_number: 'FIRST' });
    await ship(3233, { shipment_id: 91, tracking_number: 'SECOND' });
    await ship(3233, { shipment_id: 91, tracking_number: 'SECOND' });

    expect(packages(3233).map((p) => p.tracking_number)).toEqual(['FIRST', 'SECOND']);
    expect(woo().get(3233).customer_note.match(/SECOND/g)).toHaveLength(1);
    expect(loggedLines()).toContainEqual(expect.objectContaining({ event: 'shipping.packages_without_plugin', orderId: 3233 }));
  });
});

describe('an unreadable _shipment_packages is never read as none', () => {
  it.each([
    ['not JSON', '{"key": "shipment:1"'],
    ['JSON of another shape', '{"key":"shipment:1"}'],
    ['a list holding something else', '[{"key":"shipment:1","tracking_number":"A"}, 7]'],
  ])('%s: a later package applies nothing, is logged and queued until the shop repairs it', async (_, value) => {
    woo().seed({ id: 3241, status: 'shipped', meta_data: [{ key: '_tracking_number', value: 'FIRST' }, { key: '_shipment_packages', value }] });
    const noteBefore = woo().get(3241).customer_note;

    await ship(3241, { shipment_id: 2, tracking_number: 'LATER' });
    await ship(3241, { shipment_id: 3, tracking_number: 'VOIDED', voided: true });

    expect(woo().get(3241).customer_note).toBe(noteBefore);
    expect(meta(3241, '_shipment_packages')).toBe(value);
    expect(woo().listNotes(3241)).toEqual([]);
    expect(ctx.providers.orderUpdates(3241)).toHaveLength(0);
    expect(loggedLines().filter((line) => line.event === 'shipping.packages_unreadable')).toHaveLength(2);
    expect(await getServices().shippingReplay.counts()).toEqual({ waiting: 2, parked: 0 });
  });

  it('the plugin refuses to merge into an unreadable list (409), changing nothing', async () => {
    woo().seed({ id: 3242, status: 'shipped', meta_data: [{ key: '_shipment_packages', value: 'edited by hand' }] });
    await expect(getServices().store().mergeShipmentPackage(3242, { package: { key: 'shipment:1', tracking_number: 'X', carrier: '', ship_date: '' } })).rejects.toMatchObject({
      status: 409,
      code: 'checkout_bridge_packages_unreadable',
    });
    expect(meta(3242, '_shipment_packages')).toBe('edited by hand');
  });
});
