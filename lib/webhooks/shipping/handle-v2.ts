// A ShipStation V2 delivery, once its signature holds (docs/decisions.md#d40): shipped types go through V1's applyNotices,
// TRACK_EVENT_V2 `DE` is recorded as a delivery, other types are logged.
import { z } from 'zod';
import { ShipStationError } from '@/lib/errors';
import { log, type RequestContext } from '@/lib/log';
import type { Services } from '@/lib/services';
import { countRateLimitHitNow } from '@/lib/request-scope';
import { queueForReplay } from '@/lib/shared-state/shipping-replay';
import { checkResourceUrl, isResourceUrlRefusal } from '@/lib/shipping/resource-url';
import { trackedLabelId } from '@/lib/shipping/shipstation-v2';
import {
  applyNotices,
  isRetryableShipStationFailure,
  noteResourceRead,
  shipStationFailure,
} from '@/lib/webhooks/shipping/handle-notification';
import { markOrderDelivered, type DeliveryNotice } from '@/lib/webhooks/shipping/mark-delivered';
import { checkNoteDetail } from '@/lib/webhooks/shipping/note-details';

export const V2_SHIPPED_TYPES: ReadonlySet<string> = new Set(['FULFILLMENT_SHIPPED_V2', 'LABEL_CREATED_V2']);
export const V2_TRACK_TYPE = 'TRACK_EVENT_V2';
const V2_LOGGED_TYPES: ReadonlySet<string> = new Set([
  'SHIPMENT_CREATED_V2',
  'BATCH_PROCESSED_V2',
  'FULFILLMENT_REJECTED_V2',
  'RATE_UPDATED_V2',
  'REPORT_COMPLETE_V2',
  'CARRIER_CONNECTED_V2',
  'SALES_ORDERS_IMPORTED_V2',
]);
export const DELIVERED_STATUS_CODE = 'DE';

const text = (max: number) =>
  z
    .union([z.string(), z.number()])
    .nullish()
    .transform((v) => (v === null || v === undefined ? undefined : String(v).trim().slice(0, max) || undefined));

const v2PayloadSchema = z.object({
  resource_type: z.string().min(1).max(100),
  resource_url: z.string().max(2048).nullish(),
  data: z
    .object({ tracking_number: text(100), status_code: text(10), actual_delivery_date: text(40) })
    .nullish(),
});

/** ShipStation signs every V2 delivery, so an unsigned `*_V2` one is refused. */
export function claimsV2(rawBody: string): boolean {
  try {
    const data = JSON.parse(rawBody) as { resource_type?: unknown };
    return typeof data?.resource_type === 'string' && data.resource_type.endsWith('_V2');
  } catch {
    return false;
  }
}

export async function handleShipStationV2(rawBody: string, services: Services, context: RequestContext): Promise<void> {
  let parsed: z.infer<typeof v2PayloadSchema>;
  try {
    const result = v2PayloadSchema.safeParse(JSON.parse(rawBody));
    if (!result.success) throw new Error('schema');
    parsed = result.data;
  } catch (error) {
    log.warn('shipping.invalid_payload', { reason: error instanceof SyntaxError ? 'json' : 'schema', api: 'v2' });
    context.outcome = 'invalid_payload';
    return;
  }
  const type = parsed.resource_type;
  const known = V2_SHIPPED_TYPES.has(type) || type === V2_TRACK_TYPE || V2_LOGGED_TYPES.has(type);
  context.eventType = known ? type : 'unknown';

  if (type === V2_TRACK_TYPE) return recordTrackEvent(parsed, services, context);
  if (!V2_SHIPPED_TYPES.has(type) || !parsed.resource_url) {
    log.info('shipping.v2_logged_only', { eventType: context.eventType });
    context.outcome = 'logged_only';
    return;
  }

  const client = services.shipStationV2;
  if (!client) {
    log.warn('shipping.resource_url_not_configured', { eventType: type, hint: 'set SHIPSTATION_V2_API_KEY to read ShipStation V2 deliveries' });
    context.outcome = 'resource_not_configured';
    return;
  }
  await countRateLimitHitNow();
  const resourceUrl = parsed.resource_url;
  try {
    if (client.kindOf(resourceUrl) === undefined) {
      log.warn('shipping.v2_resource_unexpected', { eventType: type });
      context.outcome = 'resource_unexpected';
      return;
    }
    const result = await client.shipmentsAt(resourceUrl);
    await noteResourceRead(result, type, services);
    if (result.notices.length === 0) {
      context.outcome = 'no_shipments';
      return;
    }
    await applyNotices(result.notices, services, context);
  } catch (error) {
    if (!(error instanceof ShipStationError)) throw error;
    if (isResourceUrlRefusal(error.failure)) {
      log.warn('shipping.resource_url_refused', { reason: error.failure, origin: error.origin });
      context.outcome = 'resource_url_refused';
      return;
    }
    log.error('shipping.resource_read_failed', { failure: error.failure, status: error.status });
    context.outcome = 'resource_read_failed';
    if (isRetryableShipStationFailure(error)) {
      await queueForReplay(
        services.shippingReplay,
        { kind: 'resource', resourceUrl, eventType: type },
        { orderId: undefined, reason: shipStationFailure(error) },
      );
    }
  }
}

async function recordTrackEvent(payload: z.infer<typeof v2PayloadSchema>, services: Services, context: RequestContext): Promise<void> {
  const data = payload.data;
  if (data?.status_code !== DELIVERED_STATUS_CODE) {
    log.info('shipping.track_event', { statusCode: data?.status_code && /^[A-Z]{1,3}$/.test(data.status_code) ? data.status_code : 'other' });
    context.outcome = 'logged_only';
    return;
  }
  const client = services.shipStationV2;
  const check = client && payload.resource_url ? checkResourceUrl(payload.resource_url, client.apiBaseUrl) : undefined;
  if (check && !check.allowed) {
    log.warn('shipping.resource_url_refused', { reason: check.reason, origin: check.origin });
    context.outcome = 'resource_url_refused';
    return;
  }
  const labelId = client && payload.resource_url ? trackedLabelId(payload.resource_url, client.apiBaseUrl) : undefined;
  const delivery: DeliveryNotice = {
    orderNumber: undefined,
    trackingNumber: data.tracking_number,
    deliveredAt: deliveryDate(data.actual_delivery_date),
  };
  if (!client || !labelId) {
    log.warn('shipping.delivery_unmatched', {
      reason: client ? 'no_label' : 'not_configured',
      hint: client ? undefined : 'set SHIPSTATION_V2_API_KEY to find the order of a delivered label',
    });
    context.outcome = 'delivery_unmatched';
    return;
  }
  await countRateLimitHitNow();
  const result = await deliverThroughLabel(labelId, delivery, services);
  context.orderId = result.orderId;
  context.outcome = result.outcome;
  if (result.retryableFailure) {
    await queueForReplay(
      services.shippingReplay,
      { kind: 'delivery', labelId, delivery: { ...delivery, orderNumber: result.orderNumber } },
      { orderId: result.orderId, reason: result.retryableFailure },
    );
  }
}

/** Fixed once per delivery, so the note a retry writes is the same text as the first. */
export function deliveryDate(carrierDate: string | undefined): string {
  return carrierDate !== undefined && !checkNoteDetail('shipDate', carrierDate) ? carrierDate : new Date().toISOString();
}

export async function deliverThroughLabel(
  labelId: string | undefined,
  delivery: DeliveryNotice,
  services: Services,
): Promise<{ orderId: number | undefined; orderNumber: string | undefined; outcome: string; retryableFailure?: string }> {
  let orderNumber = delivery.orderNumber;
  if (orderNumber === undefined) {
    const client = services.shipStationV2;
    if (!client || !labelId) return { orderId: undefined, orderNumber, outcome: 'delivery_unmatched', retryableFailure: 'shipstation:not_configured' };
    try {
      const found = await client.labelOrderNumber(labelId);
      if (typeof found === 'object') {
        log.info('shipping.delivery_label_skipped', { reason: found.skipped });
        return { orderId: undefined, orderNumber, outcome: 'delivery_label_skipped' };
      }
      orderNumber = found;
    } catch (error) {
      if (!(error instanceof ShipStationError)) throw error;
      log.error('shipping.resource_read_failed', { failure: error.failure, status: error.status });
      return {
        orderId: undefined,
        orderNumber,
        outcome: 'resource_read_failed',
        ...(isRetryableShipStationFailure(error) ? { retryableFailure: shipStationFailure(error) } : {}),
      };
    }
  }
  if (orderNumber === undefined) {
    log.warn('shipping.delivery_unmatched', { reason: 'no_order_number' });
    return { orderId: undefined, orderNumber, outcome: 'delivery_unmatched' };
  }
  const result = await markOrderDelivered({ ...delivery, orderNumber }, services);
  return { ...result, orderNumber };
}
