// The shipping webhook's payload (docs/contract.md#spec-2-4) and its order number (docs/decisions.md#d11).
import { z } from 'zod';
import { parseOrderId } from '@/lib/order-id';

/** Notifications that mark an order shipped; ITEM_SHIP_NOTIFY is ShipStation's real name for ITEM_SHIPPED (docs/decisions.md#d1). */
export const SHIPPED_EVENT_TYPES: ReadonlySet<string> = new Set(['SHIP_NOTIFY', 'ITEM_SHIPPED', 'ITEM_SHIP_NOTIFY']);
export const ORDER_EVENT_TYPES: ReadonlySet<string> = new Set(['ORDER_NOTIFY', 'ITEM_ORDER_NOTIFY']);

/** Any string: note-details.ts decides whether it may reach the customer. */
const detail = z
  .string()
  .nullish()
  .transform((v) => (v === null || v === undefined || v.trim() === '' ? undefined : v.trim()));

export const shippingPayloadSchema = z.object({
  resource_type: z.string().min(1).max(100),
  resource_url: z.string().max(2048).nullish(),
  order_id: z.union([z.string().max(100), z.number()]).nullish(),
  // Any JSON value is accepted here; parseOrderNumber decides whether it names an order.
  order_number: z.unknown().optional(),
  tracking_number: detail,
  carrier: detail,
  ship_date: detail,
  // One package of the order (ShipStation's shipmentId); a later package of a shipped order is added to it.
  shipment_id: z.union([z.string().max(100), z.number().int()]).nullish(),
  voided: z.boolean().nullish(),
});

export type ShippingPayload = z.infer<typeof shippingPayloadSchema>;

export type PayloadResult = { valid: true; payload: ShippingPayload } | { valid: false; reason: 'json' | 'schema'; fields: string };

export function parseShippingPayload(rawBody: string): PayloadResult {
  let data: unknown;
  try {
    data = JSON.parse(rawBody);
  } catch {
    return { valid: false, reason: 'json', fields: '' };
  }
  const parsed = shippingPayloadSchema.safeParse(data);
  if (!parsed.success) {
    // Field names only: the values are the sender's and stay out of the log.
    const fields = [...new Set(parsed.error.issues.map((issue) => issue.path.join('.') || '(body)'))].join(',');
    return { valid: false, reason: 'schema', fields: fields.slice(0, 200) };
  }
  return { valid: true, payload: parsed.data };
}

/** Some store integrations pad ShipStation's orderNumber with zeros: `0042` is order 42. */
export function parseOrderNumber(value: unknown): number | undefined {
  return parseOrderId(value, 'zero_padded');
}

/** A wrong one still counts: it is "not a number", not "missing". */
export function hasOrderNumber(payload: ShippingPayload): boolean {
  return payload.order_number !== undefined && payload.order_number !== null && payload.order_number !== '';
}
