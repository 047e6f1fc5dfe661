// The shipping webhook after the rate limit and the secret (docs/contract.md#spec-4-4, docs/decisions.md#d11): always 200,
// the reason in the log; what cannot be applied now goes to the replay queue (docs/decisions.md#d26).
import { ShipStationError } from '@/lib/errors';
import { log, type RequestContext } from '@/lib/log';
import { countRateLimitHitNow } from '@/lib/request-scope';
import type { Services } from '@/lib/services';
import { isResourceUrlRefusal } from '@/lib/shipping/resource-url';
import { type ShipmentNotice, type ShipmentsResult, type UnreadPages } from '@/lib/shipping/shipstation';
import { MIN_ATTEMPT_MS, requestTimeLeftMs } from '@/lib/upstream/budget';
import { markOrderShipped, type ShipResult } from '@/lib/webhooks/shipping/mark-shipped';
import { isRetryableShipStationFailure, shipStationFailure } from '@/lib/webhooks/shipping/shipstation-failure';

export { isRetryableShipStationFailure, shipStationFailure };
import { queueForReplay } from '@/lib/shared-state/shipping-replay';
import {
  hasOrderNumber,
  ORDER_EVENT_TYPES,
  parseOrderNumber,
  parseShippingPayload,
  SHIPPED_EVENT_TYPES,
  type ShippingPayload,
} from '@/lib/webhooks/shipping/payload';

export async function handleShippingNotification(rawBody: string, services: Services, context: RequestContext): Promise<void> {
  const parsed = parseShippingPayload(rawBody);
  if (!parsed.valid) {
    log.warn('shipping.invalid_payload', { reason: parsed.reason, fields: parsed.fields || undefined });
    context.outcome = 'invalid_payload';
    return;
  }
  const { payload } = parsed;
  const eventType = payload.resource_type;
  // Only a known type reaches the log and the trace: the sender's own text never does.
  context.eventType = ORDER_EVENT_TYPES.has(eventType) || SHIPPED_EVENT_TYPES.has(eventType) ? eventType : 'unknown';

  if (ORDER_EVENT_TYPES.has(eventType)) {
    log.info('shipping.order_notification', { eventType });
    context.outcome = 'logged_only';
    return;
  }
  if (!SHIPPED_EVENT_TYPES.has(eventType)) {
    context.outcome = 'ignored_event_type';
    return;
  }

  const notices = await shipmentNotices(payload, services, context);
  if (notices === undefined) return;
  if (notices.length === 0) {
    context.outcome = 'no_shipments';
    return;
  }

  await applyNotices(notices, services, context);
}

export async function applyNotices(notices: ShipmentNotice[], services: Services, context: RequestContext): Promise<void> {
  const results: ShipResult[] = [];
  const numbers = new Map<string, string | undefined>();
  // One at a time: shipments of one batch may name the same order, and the lock then makes the later ones no-ops.
  for (const notice of notices) {
    const result = requestTimeLeftMs() < MIN_ATTEMPT_MS ? noTimeLeft(notice) : await markOrderShipped(notice, services, numbers);
    results.push(result);
    if (result.retryableFailure) {
      await queueForReplay(services.shippingReplay, { kind: 'shipment', notice }, { orderId: result.orderId, reason: result.retryableFailure });
    }
    if (notices.length > 1) log.info('shipping.shipment', { orderId: result.orderId, outcome: result.outcome });
  }
  const orderIds = new Set(results.map((r) => r.orderId).filter((id) => id !== undefined));
  if (orderIds.size === 1) context.orderId = [...orderIds][0];
  context.outcome = results.length === 1 ? results[0]?.outcome : `shipments:${results.length}`;
}

/** Queued untried: its store calls could only time out. */
function noTimeLeft(notice: ShipmentNotice): ShipResult {
  return { orderId: parseOrderNumber(notice.orderNumber), outcome: 'no_time', retryableFailure: 'no_time' };
}

async function shipmentNotices(
  payload: ShippingPayload,
  services: Services,
  context: RequestContext,
): Promise<ShipmentNotice[] | undefined> {
  if (hasOrderNumber(payload) || !payload.resource_url) {
    // Inline. A missing or malformed order number ends in markOrderShipped as `bad_order_number`.
    return [
      {
        orderNumber: typeof payload.order_number === 'string' ? payload.order_number : undefined,
        trackingNumber: payload.tracking_number,
        carrier: payload.carrier,
        shipDate: payload.ship_date,
        ...(payload.shipment_id !== null && payload.shipment_id !== undefined ? { shipmentId: String(payload.shipment_id) } : {}),
        ...(payload.voided === true ? { voided: true } : {}),
      },
    ];
  }

  const { shipStation } = services;
  if (!shipStation) {
    log.warn('shipping.resource_url_not_configured', {
      eventType: payload.resource_type,
      hint: 'set SHIPSTATION_API_KEY and SHIPSTATION_API_SECRET to read ShipStation deliveries',
    });
    context.outcome = 'resource_not_configured';
    return undefined;
  }
  // The rate-limit hit is counted before an upstream is called (docs/decisions.md#d31).
  await countRateLimitHitNow();

  try {
    const result = await shipStation.shipmentsAt(payload.resource_url);
    await noteResourceRead(result, payload.resource_type, services);
    return result.notices;
  } catch (error) {
    if (!(error instanceof ShipStationError)) throw error;
    if (isResourceUrlRefusal(error.failure)) {
      log.warn('shipping.resource_url_refused', { reason: error.failure, origin: error.origin });
      context.outcome = 'resource_url_refused';
    } else {
      log.error('shipping.resource_read_failed', { failure: error.failure, status: error.status });
      context.outcome = 'resource_read_failed';
      if (isRetryableShipStationFailure(error)) {
        await queueForReplay(
          services.shippingReplay,
          { kind: 'resource', resourceUrl: payload.resource_url, eventType: payload.resource_type },
          { orderId: undefined, reason: shipStationFailure(error) },
        );
      }
    }
    return undefined;
  }
}

export async function noteResourceRead(result: ShipmentsResult, eventType: string, services: Services): Promise<void> {
  const { unread } = result;
  log.info('shipping.resource_read', {
    eventType,
    shipments: result.notices.length,
    voided: result.voided,
    malformed: result.malformed || undefined,
    unreadFromPage: unread?.page,
    pages: unread?.pages,
    stoppedFor: unread?.reason,
  });
  if (unread) await queueUnreadPages(unread, eventType, services);
}

export async function queueUnreadPages(unread: UnreadPages, eventType: string, services: Services): Promise<void> {
  if (unread.error && !isRetryableShipStationFailure(unread.error)) {
    log.error('shipping.resource_read_failed', { failure: unread.error.failure, status: unread.error.status, page: unread.page });
    return;
  }
  await queueForReplay(
    services.shippingReplay,
    { kind: 'resource', resourceUrl: unread.resourceUrl, eventType },
    { orderId: undefined, reason: unread.error ? shipStationFailure(unread.error) : `shipstation:${unread.reason}` },
  );
}
