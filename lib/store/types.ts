/** WooCommerce REST v3's resources as the service reads them, parsed at the boundary. */
import { z } from 'zod';

/** Not a decimal: a bad store response here, rather than a money error deep in a use case. */
const decimal = z
  .union([z.string(), z.number().finite()])
  .transform((v) => (typeof v === 'number' ? v.toFixed(6) : v.trim() === '' ? '0' : v.trim()))
  .refine((v) => /^[+-]?(\d+(\.\d*)?|\.\d+)$/.test(v), { message: 'must be a decimal amount' });

export const metaEntrySchema = z.object({
  id: z.number().int().optional(),
  key: z.string(),
  // WooCommerce meta values may be any JSON; the service only ever writes strings.
  value: z.unknown(),
});

const addressSchema = z.record(z.string(), z.unknown());

const lineSchema = z.object({ total: decimal.default('0') });

const shippingLineSchema = z.object({ id: z.number().int(), method_id: z.string().nullish(), total: decimal.default('0') });

export const storeOrderSchema = z.object({
  id: z.number().int().positive(),
  status: z.string(),
  currency: z.string().min(3).max(3),
  total: decimal.default('0'),
  total_tax: decimal.default('0'),
  shipping_total: decimal.default('0'),
  customer_id: z.number().int().nullish().transform((v) => v ?? 0),
  billing: addressSchema.nullish().transform((v) => v ?? {}),
  shipping: addressSchema.nullish().transform((v) => v ?? {}),
  customer_note: z.string().nullish().transform((v) => v ?? ''),
  payment_method: z.string().nullish(),
  transaction_id: z.string().nullish(),
  date_paid: z.string().nullish().transform((v) => v ?? null),
  date_paid_gmt: z.string().nullish().transform((v) => v ?? null),
  /** False when every item is virtual and downloadable: WooCommerce's payment-complete status is then `completed`. */
  needs_processing: z.boolean().nullish(),
  meta_data: z.array(metaEntrySchema).nullish().transform((v) => v ?? []),
  line_items: z.array(lineSchema).nullish().transform((v) => v ?? []),
  fee_lines: z.array(lineSchema).nullish().transform((v) => v ?? []),
  shipping_lines: z.array(shippingLineSchema).nullish(),
});

export type StoreOrder = z.infer<typeof storeOrderSchema>;

export const storeCustomerSchema = z.object({
  id: z.number().int().positive(),
  email: z.string().nullish().transform((v) => v ?? ''),
  first_name: z.string().nullish().transform((v) => v ?? ''),
  last_name: z.string().nullish().transform((v) => v ?? ''),
  meta_data: z.array(metaEntrySchema).nullish().transform((v) => v ?? []),
});

export type StoreCustomer = z.infer<typeof storeCustomerSchema>;

/** Address fields the service writes (docs/decisions.md#d6); every other key is dropped. */
export interface OrderAddress {
  first_name?: string;
  last_name?: string;
  company?: string;
  address_1?: string;
  address_2?: string;
  city?: string;
  state?: string;
  postcode?: string;
  country?: string;
  email?: string;
  phone?: string;
}

export interface OrderUpdate {
  status?: string;
  billing?: OrderAddress;
  shipping?: OrderAddress;
  customer_note?: string;
  customer_id?: number;
  meta_data?: { id?: number; key: string; value: unknown }[];
  payment_method?: string;
  payment_method_title?: string;
  transaction_id?: string;
  date_paid?: string;
  date_paid_gmt?: string;
  /** A line with `method_id: null` is removed (the REST controller's item_is_null). */
  shipping_lines?: { id?: number; method_id: string | null; method_title?: string; instance_id?: string; total?: string }[];
}

const destinationSchema = z.object({ country: z.string(), state: z.string(), postcode: z.string(), city: z.string() });
export type ShippingDestination = z.infer<typeof destinationSchema>;

export const storeShippingQuoteSchema = z.object({
  rates: z.array(
    z.object({
      id: z.string().min(1).max(200),
      method_id: z.string(),
      instance_id: z.number().int().nullish().transform((v) => v ?? 0),
      label: z.string(),
      total: decimal,
      total_tax: decimal,
    }),
  ),
  cart_tax: decimal,
  /** The destination as WooCommerce matched it (a state name becomes its code): the address to write. */
  destination: destinationSchema,
});
export type StoreShippingQuote = z.infer<typeof storeShippingQuoteSchema>;
export type StoreShippingRate = StoreShippingQuote['rates'][number];

export const storeRefundSchema = z.object({
  id: z.number().int().positive(),
  amount: decimal,
  reason: z.string().nullish().transform((v) => v ?? ''),
  meta_data: z.array(metaEntrySchema).nullish().transform((v) => v ?? []),
  /** Site time without zone, as WooCommerce writes it. */
  date_created_gmt: z.string().nullish(),
  /** Set once the gateway paid it back (wc_create_refund), never on a "Refund manually" entry. */
  refunded_payment: z.boolean().nullish(),
});
export type StoreRefund = z.infer<typeof storeRefundSchema>;

export interface RefundRecord {
  amount: string;
  reason: string;
  meta: Record<string, string>;
}

export interface ShipmentPackageMerge {
  package: { key: string; tracking_number: string; carrier: string; ship_date: string; voided?: true };
  note_line?: string;
  tracking_item?: Record<string, unknown>;
  remove_tracking_id?: string;
  /** The first package: ships the order if it is still in status `from`, with this status, note and meta. */
  ship?: { from: string; status: string; customer_note: string; meta: Record<string, string> };
}

/** The companion plugin's answer to a package merge; anything else is no proof it happened. */
export const shipmentPackageMergedSchema = z.object({
  added: z.boolean(),
  shipped: z.unknown().optional().transform((v) => v === true),
  status: z.string(),
  packages: z.array(z.unknown()),
});
export type ShipmentPackageMerged = z.infer<typeof shipmentPackageMergedSchema>;
