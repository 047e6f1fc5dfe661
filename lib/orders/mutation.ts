/** The one order-mutation helper: every order update the service sends is built here (docs/decisions.md#d9). */
import { META } from '@/lib/orders/meta-keys';
import { metaValue } from '@/lib/orders/normalize';
import { isServiceMessage } from '@/lib/orders/notes';
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

export interface OrderChange {
  status?: string;
  billing?: OrderAddress;
  shipping?: OrderAddress;
  customerNote?: string;
  /** A line added under the current customer note (a later package), rather than a note replacing it. */
  customerNoteLine?: string;
  meta?: Record<string, string>;
  metaMode?: 'replace' | 'append';
  paymentMethod?: { id: string; title: string; transactionId?: string };
  datePaid?: string;
  customerId?: number;
  /** Meta replaced by key whose values need not be strings (`_wc_shipment_tracking_items` is an array). */
  metaValues?: Record<string, unknown>;
  shippingLine?: { methodId: string; instanceId: number; title: string; total: string };
}

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
  if (change.customerNoteLine !== undefined) update.customer_note = order.customer_note ? `${order.customer_note}\n${change.customerNoteLine}` : change.customerNoteLine;
  const kept = change.customerNote === undefined ? {} : keptCustomerNote(order, change.customerNote);
  if (change.customerId !== undefined && change.customerId > 0) update.customer_id = change.customerId;
  if (change.paymentMethod !== undefined) {
    update.payment_method = change.paymentMethod.id;
    update.payment_method_title = change.paymentMethod.title;
    if (change.paymentMethod.transactionId !== undefined) update.transaction_id = change.paymentMethod.transactionId;
  }
  if (change.datePaid !== undefined) Object.assign(update, { date_paid: change.datePaid, date_paid_gmt: change.datePaid });
  if (change.shippingLine !== undefined) update.shipping_lines = shippingLinesUpdate(order, change.shippingLine);
  const metaValues = change.metaValues === undefined && Object.keys(kept).length === 0 ? undefined : { ...change.metaValues, ...kept };
  const spec = change.meta === undefined ? undefined : orderPropertiesOf(change.meta, update);
  if (spec !== undefined || metaValues !== undefined) {
    let meta: MetaList = order.meta_data.map(({ id, key, value }) => (id === undefined ? { key, value } : { id, key, value }));
    if (spec !== undefined) {
      if (change.metaMode === undefined) throw new TypeError('metaMode is required when writing meta');
      meta = mergeMeta(meta, spec, change.metaMode);
    }
    if (metaValues !== undefined) meta = mergeMeta(meta, metaValues, 'replace');
    update.meta_data = meta;
  }
  return update;
}

/** Written as the order properties they are (docs/decisions.md#payment-properties). */
export const ORDER_PROPERTY_META = {
  [META.paymentMethod]: 'payment_method',
  [META.paymentMethodTitle]: 'payment_method_title',
  [META.transactionId]: 'transaction_id',
} as const satisfies Record<string, keyof OrderUpdate>;

function orderPropertiesOf(meta: Record<string, string>, update: OrderUpdate): Record<string, string> {
  const rest: Record<string, string> = {};
  for (const [key, value] of Object.entries(meta)) {
    const property = (ORDER_PROPERTY_META as Partial<Record<string, (typeof ORDER_PROPERTY_META)[keyof typeof ORDER_PROPERTY_META]>>)[key];
    if (property === undefined) rest[key] = value;
    else update[property] ??= value;
  }
  return rest;
}

/** Kept by the very update that replaces it (docs/decisions.md#customer-messages). */
export function keptCustomerNote(order: StoreOrder, replacement: string): Record<string, string> {
  const current = order.customer_note;
  if (current.trim() === '' || current === replacement || isServiceMessage(current)) return {};
  if (metaValue(order, META.customerNoteAtCheckout) !== undefined) return {};
  return { [META.customerNoteAtCheckout]: current };
}

type MetaList = NonNullable<OrderUpdate['meta_data']>;

function shippingLinesUpdate(order: StoreOrder, line: NonNullable<OrderChange['shippingLine']>): NonNullable<OrderUpdate['shipping_lines']> {
  const [first, ...others] = order.shipping_lines ?? [];
  const written = { method_id: line.methodId, method_title: line.title, instance_id: String(line.instanceId), total: line.total };
  return [first ? { id: first.id, ...written } : written, ...others.map(({ id }) => ({ id, method_id: null }))];
}

function mergeMeta(current: MetaList, entries: Record<string, unknown>, mode: NonNullable<OrderChange['metaMode']>): MetaList {
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
