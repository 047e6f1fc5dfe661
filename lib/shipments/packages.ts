// The packages of one order: `_shipment_packages` is also their receipt (docs/integrations/shipstation.md#packages-and-two-instances-without-a-shared-lock),
// and with SHIPMENT_TRACKING_META each is an item of `_wc_shipment_tracking_items` (docs/decisions.md#d38).
import { createHash } from 'node:crypto';
import { META } from '@/lib/orders/meta-keys';
import { metaValue } from '@/lib/orders/normalize';
import type { ShipmentNotice } from '@/lib/shipment-notices';
import type { ShipmentPackageMerge, StoreOrder } from '@/lib/store/types';

/** One package as `_shipment_packages` lists it and the companion plugin merges it. */
export type PackageEntry = ShipmentPackageMerge['package'];

export function packageKey(notice: ShipmentNotice): string | undefined {
  if (notice.shipmentId) return `shipment:${notice.shipmentId}`;
  return notice.trackingNumber ? `tracking:${notice.trackingNumber}` : undefined;
}

function isEntry(value: unknown): value is PackageEntry {
  return value !== null && typeof value === 'object' && !Array.isArray(value) && typeof (value as PackageEntry).key === 'string';
}

/**
 * The first shipment is in the spec's tracking meta (it writes no list). Undefined when the list is
 * unreadable: never read as "none", which would apply its packages again.
 */
export function packagesOf(order: StoreOrder): PackageEntry[] | undefined {
  let listed: PackageEntry[] = [];
  const raw = metaValue(order, META.shipmentPackages);
  if (raw !== undefined) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(raw);
    } catch {
      return undefined;
    }
    if (!Array.isArray(parsed) || !parsed.every(isEntry)) return undefined;
    listed = parsed;
  }
  const tracking = metaValue(order, META.trackingNumber);
  if (!tracking || listed.some((entry) => entry.tracking_number === tracking)) return listed;
  const first: PackageEntry = {
    key: `tracking:${tracking}`,
    tracking_number: tracking,
    carrier: metaValue(order, META.shippingCarrier) ?? '',
    ship_date: metaValue(order, META.shippedDate) ?? '',
  };
  return [first, ...listed];
}

/** By tracking number too, for a package listed without its id. */
export function holdsPackage(packages: readonly PackageEntry[], notice: ShipmentNotice, key: string): boolean {
  return packages.some((entry) => entry.key === key || (notice.trackingNumber !== undefined && entry.tracking_number === notice.trackingNumber && !entry.voided));
}

export function entryOf(notice: ShipmentNotice, key: string, now: string): PackageEntry {
  return { key, tracking_number: notice.trackingNumber ?? '', carrier: notice.carrier ?? '', ship_date: notice.shipDate ?? now };
}

/** Derived from the tracking number, the one thing every record of a package holds: the same package, the same item. */
function trackingId(entry: PackageEntry): string {
  return createHash('md5').update(`tracking:${entry.tracking_number}`).digest('hex');
}

/** An item of `_wc_shipment_tracking_items`, as the Shipment Tracking extension writes one. */
function trackingItemOf(entry: PackageEntry) {
  const shipped = Date.parse(entry.ship_date);
  return {
    tracking_provider: '',
    custom_tracking_provider: entry.carrier,
    custom_tracking_link: '',
    tracking_number: entry.tracking_number,
    date_shipped: Math.floor((Number.isFinite(shipped) ? shipped : Date.now()) / 1000),
    tracking_id: trackingId(entry),
  };
}

/** Items the shop added itself are kept. */
export function trackingItemsMeta(order: StoreOrder, packages: readonly PackageEntry[], trackingMeta: boolean): Record<string, unknown> {
  if (!trackingMeta) return {};
  const ours = new Map(packages.filter((entry) => entry.tracking_number).map((entry) => [trackingId(entry), entry]));
  const value = order.meta_data.find((m) => m.key === META.shipmentTrackingItems)?.value;
  const listed = Array.isArray(value) ? value.filter((item): item is Record<string, unknown> => item !== null && typeof item === 'object') : [];
  const items = listed.filter((item) => {
    const entry = typeof item.tracking_id === 'string' ? ours.get(item.tracking_id) : undefined;
    return entry === undefined || !entry.voided;
  });
  const present = new Set(items.map((item) => item.tracking_id));
  for (const [id, entry] of ours) {
    if (entry.voided || present.has(id)) continue;
    items.push({ ...trackingItemOf(entry) });
  }
  return { [META.shipmentTrackingItems]: items };
}

export function packageMerge(entry: PackageEntry, noteLine: string | undefined, trackingMeta: boolean): ShipmentPackageMerge {
  const tracked = trackingMeta && entry.tracking_number !== '';
  if (entry.voided) return { package: entry, ...(tracked ? { remove_tracking_id: trackingId(entry) } : {}) };
  return { package: entry, ...(noteLine ? { note_line: noteLine } : {}), ...(tracked ? { tracking_item: { ...trackingItemOf(entry) } } : {}) };
}

export function packagesMeta(order: StoreOrder, packages: readonly PackageEntry[], trackingMeta: boolean): Record<string, unknown> {
  return { [META.shipmentPackages]: JSON.stringify(packages), ...trackingItemsMeta(order, packages, trackingMeta) };
}
