/**
 * The one order-mutation helper (docs/decisions.md#d9): every WooCommerce order update
 * the service sends is built here.
 *
 * Meta is written the two ways docs/contract.md#spec-2-1 names: checkout writes replace a key's
 * value (one entry per key), webhooks append their entries to the existing
 * list. Either way the body carries the existing entries plus the new ones.
 */
import type { OrderAddress, OrderUpdate, StoreOrder } from '@/lib/store/types';

export const ADDRESS_FIELDS = [
  'first_name',
  'last_name',
  'company',
  'address_1',
  'address_2',
  'city',
  'state',
  'postcode',
  'country',
  'email',
  'phone',
] as const satisfies readonly (keyof OrderAddress)[];

export type MetaMode = 'replace' | 'append';

export interface OrderChange {
  status?: string;
  billing?: OrderAddress;
  shipping?: OrderAddress;
  customerNote?: string;
  meta?: Record<string, string>;
  /** Required with `meta`: checkout writes replace, webhooks append. */
  metaMode?: MetaMode;
  paymentMethod?: { id: string; title: string; transactionId?: string };
  datePaid?: string;
  customerId?: number;
  /** Meta replaced by key whose values need not be strings (`_wc_shipment_tracking_items` is an array). */
  metaValues?: Record<string, unknown>;
  /** The order's one shipping line: the first line is rewritten, any other removed. */
  shippingLine?: { methodId: string; instanceId: number; title: string; total: string };
}

/** Only the address fields the service writes; anything else a client sent is dropped here too. */
export function pickAddress(source: OrderAddress | Record<string, unknown>, options: { withEmail: boolean }): OrderAddress {
  const address: OrderAddress = {};
  for (const field of ADDRESS_FIELDS) {
    if (field === 'email' && !options.withEmail) continue;
    const value = (source as Record<string, unknown>)[field];
    if (typeof value === 'string') address[field] = value;
  }
  return address;
}

export function buildOrderUpdate(order: StoreOrder, change: OrderChange): OrderUpdate {
  const update: OrderUpdate = {};
  if (change.status !== undefined) update.status = change.status;
  // WooCommerce's billing has email and phone; its shipping has phone but no email.
  if (change.billing !== undefined) update.billing = pickAddress(change.billing, { withEmail: true });
  if (change.shipping !== undefined) update.shipping = pickAddress(change.shipping, { withEmail: false });
  if (change.customerNote !== undefined) update.customer_note = change.customerNote;
  if (change.customerId !== undefined && change.customerId > 0) update.customer_id = change.customerId;
  if (change.paymentMethod !== undefined) {
    update.payment_method = change.paymentMethod.id;
    update.payment_method_title = change.paymentMethod.title;
    if (change.paymentMethod.transactionId !== undefined) update.transaction_id = change.paymentMethod.transactionId;
  }
  if (change.datePaid !== undefined) {
    update.date_paid = change.datePaid;
    update.date_paid_gmt = change.datePaid;
  }
  if (change.shippingLine !== undefined) update.shipping_lines = shippingLinesUpdate(order, change.shippingLine);
  if (change.meta !== undefined || change.metaValues !== undefined) {
    let meta: MetaList = order.meta_data.map(({ id, key, value }) => (id === undefined ? { key, value } : { id, key, value }));
    if (change.meta !== undefined) {
      if (change.metaMode === undefined) throw new TypeError('metaMode is required when writing meta');
      meta = mergeMeta(meta, change.meta, change.metaMode);
    }
    if (change.metaValues !== undefined) meta = mergeMeta(meta, change.metaValues, 'replace');
    update.meta_data = meta;
  }
  return update;
}

type MetaList = NonNullable<OrderUpdate['meta_data']>;

function shippingLinesUpdate(order: StoreOrder, line: NonNullable<OrderChange['shippingLine']>): NonNullable<OrderUpdate['shipping_lines']> {
  const [first, ...others] = order.shipping_lines ?? [];
  const written = { method_id: line.methodId, method_title: line.title, instance_id: String(line.instanceId), total: line.total };
  return [first ? { id: first.id, ...written } : written, ...others.map(({ id }) => ({ id, method_id: null }))];
}

function mergeMeta(current: MetaList, entries: Record<string, unknown>, mode: MetaMode): MetaList {
  const additions = Object.entries(entries).map(([key, value]) => ({ key, value }));
  if (mode === 'append') return [...current, ...additions];

  const written = new Set<string>();
  const merged = current.map((entry) => {
    if (!(entry.key in entries)) return entry;
    written.add(entry.key);
    return { ...entry, value: entries[entry.key] };
  });
  return [...merged, ...additions.filter((entry) => !written.has(entry.key))];
}
