// The shipping webhook's payloads: V1's (docs/contract.md#spec-2-4, docs/decisions.md#d11) and V2's (docs/decisions.md#d40).
import { z } from 'zod';
import { boundedText } from '@/lib/shipping/http';

/** Notifications that mark an order shipped; ITEM_SHIP_NOTIFY is ShipStation's real name for ITEM_SHIPPED (docs/decisions.md#d1). */
export const SHIPPED_EVENT_TYPES: ReadonlySet<string> = new Set(['SHIP_NOTIFY', 'ITEM_SHIPPED', 'ITEM_SHIP_NOTIFY']);
export const ORDER_EVENT_TYPES: ReadonlySet<string> = new Set(['ORDER_NOTIFY', 'ITEM_ORDER_NOTIFY']);

/** Any string: note-details.ts decides whether it may reach the customer. */
const detail = z
  .string()
  .nullish()
  .transform((v) => (v === null || v === undefined || v.trim() === '' ? undefined : v.trim()));

const resource = { resource_type: z.string().min(1).max(100), resource_url: z.string().max(2048).nullish() };

export const shippingPayloadSchema = z.object({
  ...resource,
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

/** The V1 and V2 bodies read alike: JSON, then their schema. */
function parseWith<S extends z.ZodType>(schema: S, rawBody: string) {
  let data: unknown;
  try {
    data = JSON.parse(rawBody);
  } catch {
    return { valid: false as const, reason: 'json' as const, fields: '' };
  }
  const parsed = schema.safeParse(data);
  if (!parsed.success) {
    // Field names only: the values are the sender's and stay out of the log.
    const fields = [...new Set(parsed.error.issues.map((issue) => issue.path.join('.') || '(body)'))].join(',');
    return { valid: false as const, reason: 'schema' as const, fields: fields.slice(0, 200) };
  }
  return { valid: true as const, payload: parsed.data };
}

export const parseShippingPayload = (rawBody: string) => parseWith(shippingPayloadSchema, rawBody);

/** A wrong one still counts: it is "not a number", not "missing". */
export function hasOrderNumber(payload: ShippingPayload): boolean {
  return payload.order_number !== undefined && payload.order_number !== null && payload.order_number !== '';
}

export const V2_SHIPPED_TYPES: ReadonlySet<string> = new Set(['FULFILLMENT_SHIPPED_V2', 'LABEL_CREATED_V2']);
export const V2_TRACK_TYPE = 'TRACK_EVENT_V2';
export const V2_LOGGED_TYPES: ReadonlySet<string> = new Set([
  'SHIPMENT_CREATED_V2',
  'BATCH_PROCESSED_V2',
  'FULFILLMENT_REJECTED_V2',
  'RATE_UPDATED_V2',
  'REPORT_COMPLETE_V2',
  'CARRIER_CONNECTED_V2',
  'SALES_ORDERS_IMPORTED_V2',
]);

const v2PayloadSchema = z.object({
  ...resource,
  data: z
    .object({ tracking_number: boundedText(100), status_code: boundedText(10), actual_delivery_date: boundedText(40) })
    .nullish(),
});

export type V2Payload = z.infer<typeof v2PayloadSchema>;

export const parseV2Payload = (rawBody: string) => parseWith(v2PayloadSchema, rawBody);

/** ShipStation signs every V2 delivery, so an unsigned `*_V2` one is refused. */
export function claimsV2(rawBody: string): boolean {
  try {
    const data = JSON.parse(rawBody) as { resource_type?: unknown };
    return typeof data?.resource_type === 'string' && data.resource_type.endsWith('_V2');
  } catch {
    return false;
  }
}
