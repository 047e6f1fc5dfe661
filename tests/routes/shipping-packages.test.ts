/**
 * Every package tracked: the first shipment ships the order (the spec); a
 * later package of a shipped order (another shipment id or tracking number)
 * adds its tracking to `_shipment_packages` and a line to the customer note,
 * once however often it comes; a voided shipment gets a private note and ships
 * nothing. SHIPMENT_TRACKING_META=on also writes WooCommerce Shipment
 * Tracking's `_wc_shipment_tracking_items`; off (the default) writes none.
 */
import { createHash } from 'node:crypto';
import { beforeEach, describe, expect, it } from 'vitest';
import { POST } from '@/app/api/shipping/webhook/route';
import { useTestEnv } from '../support/env';
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
    expect(packages(3201)).toEqual([
      { key: 'tracking:PKG-A', tracking_number: 'PKG-A', carrier: 'ups', ship_date: '2026-05-01' },
      { key: 'shipment:12', tracking_number: 'PKG-B', carrier: 'fedex', ship_date: '2026-05-02' },
    ]);
    // The spec's four keys still name the first package.
    expect(meta(3201, '_tracking_number')).toBe('PKG-A');
    expect(meta(3201, '_wc_shipment_tracking_items')).toBeUndefined();
  });

  it('is added once: the same package again, and twice at once, writes one update', async () => {
    woo().seed({ id: 3202, status: 'processing' });
    await ship(3202, { shipment_id: 21, tracking_number: 'FIRST' });
    const before = ctx.providers.orderUpdates(3202).length;
    await Promise.all([ship(3202, { shipment_id: 22, tracking_number: 'SECOND' }), ship(3202, { shipment_id: 22, tracking_number: 'SECOND' })]);
    await ship(3202, { shipment_id: 22, tracking_number: 'SECOND' });
    // The first package again, by its id or its tracking number, adds nothing either.
    await ship(3202, { shipment_id: 21, tracking_number: 'FIRST' });
    await ship(3202, { tracking_number: 'FIRST' });

    expect(ctx.providers.orderUpdates(3202)).toHaveLength(before + 1);
    expect(packages(3202).map((p) => p.tracking_number)).toEqual(['FIRST', 'SECOND']);
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
