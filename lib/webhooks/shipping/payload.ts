/**
 * The shipping webhook's payload (docs/contract.md#spec-2-4) and its order number (docs/decisions.md#d11).
 *
 * Inline senders post `order_number`, `tracking_number`, `carrier` and
 * `ship_date`; real ShipStation posts only `resource_url` and `resource_type`.
 * A body that is not JSON, not an object, or has a field of the wrong type is
 * an invalid payload: logged by field name and answered 200 so it is not retried.
 */
import { z } from 'zod';
import { parseOrderId } from '@/lib/order-id';

/** Notifications that mark an order shipped; ITEM_SHIP_NOTIFY is ShipStation's real name for ITEM_SHIPPED (docs/decisions.md#d1). */
export const SHIPPED_EVENT_TYPES: ReadonlySet<string> = new Set(['SHIP_NOTIFY', 'ITEM_SHIPPED', 'ITEM_SHIP_NOTIFY']);
/** Notifications that are only logged (docs/contract.md#spec-4-4 step 4). */
export const ORDER_EVENT_TYPES: ReadonlySet<string> = new Set(['ORDER_NOTIFY', 'ITEM_ORDER_NOTIFY']);

/**
 * Text that ends up in the customer note and meta: empty counts as absent. A
 * string is accepted here whatever its length or content; lib/webhooks/shipping/note-details.ts
 * decides whether it may reach the customer (a refused one counts as absent).
 */
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

/**
 * The store order id an order number names, else undefined. ShipStation's orderNumber is the
 * store's order id as text, which some store integrations pad with zeros: `0042` is order 42.
 */
export function parseOrderNumber(value: unknown): number | undefined {
  return parseOrderId(value, 'zero_padded');
}

/** Whether the payload carries an order number at all (a wrong one still counts: it is "not a number", not "missing"). */
export function hasOrderNumber(payload: ShippingPayload): boolean {
  return payload.order_number !== undefined && payload.order_number !== null && payload.order_number !== '';
}
