// The shipping webhook after the rate limit and the secret (docs/contract.md#spec-4-4, docs/decisions.md#d11) or V2's signature
// (docs/decisions.md#d40): always 200, the reason in the log; what cannot be applied now is queued (docs/decisions.md#d26).
import { ShipStationError } from '@/lib/errors';
import { log, type RequestContext } from '@/lib/log';
import { countRateLimitHitNow } from '@/lib/request-scope';
import type { Services } from '@/lib/services';
import { checkResourceUrl, isResourceUrlRefusal } from '@/lib/shipping/resource-url';
import { shipmentNotice, type ShipmentsResult } from '@/lib/shipping/shipstation';
import { MIN_ATTEMPT_MS, requestTimeLeftMs } from '@/lib/upstream/budget';
import { isRetryableShipStationFailure, retryableShipStation, shipStationFailure } from '@/lib/shipments/failures';
import { deliverThroughLabel, deliveryDate } from '@/lib/shipments/mark-delivered';
import { markOrderShipped, parseOrderNumber, type ShipResult } from '@/lib/shipments/mark-shipped';
import { queueForReplay } from '@/lib/shared-state/shipping-replay';
import {
  hasOrderNumber,
  ORDER_EVENT_TYPES,
  parseShippingPayload,
  parseV2Payload,
  SHIPPED_EVENT_TYPES,
  V2_LOGGED_TYPES,
  V2_SHIPPED_TYPES,
  V2_TRACK_TYPE,
  type V2Payload,
} from '@/lib/webhooks/shipping/payload';

const DELIVERED_STATUS_CODE = 'DE';

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
  if (hasOrderNumber(payload) || !payload.resource_url) {
    // Inline. A missing or malformed order number ends in markOrderShipped as `bad_order_number`.
    const notice = shipmentNotice({
      orderNumber: typeof payload.order_number === 'string' ? payload.order_number : undefined,
      trackingNumber: payload.tracking_number,
      carrier: payload.carrier,
      shipDate: payload.ship_date,
      shipmentId: payload.shipment_id === null || payload.shipment_id === undefined ? undefined : String(payload.shipment_id),
      voided: payload.voided,
    });
    return applyNotices([notice], services, context);
  }
  const { shipStation } = services;
  if (!shipStation) {
    return notConfigured(eventType, 'set SHIPSTATION_API_KEY and SHIPSTATION_API_SECRET to read ShipStation deliveries', context);
  }
  const resourceUrl = payload.resource_url;
  await readAndApply(resourceUrl, eventType, () => shipStation.shipmentsAt(resourceUrl), services, context);
}

export async function handleShipStationV2(rawBody: string, services: Services, context: RequestContext): Promise<void> {
  const parsed = parseV2Payload(rawBody);
  if (!parsed.valid) {
    log.warn('shipping.invalid_payload', { reason: parsed.reason, api: 'v2' });
    context.outcome = 'invalid_payload';
    return;
  }
  const { payload } = parsed;
  const type = payload.resource_type;
  const known = V2_SHIPPED_TYPES.has(type) || type === V2_TRACK_TYPE || V2_LOGGED_TYPES.has(type);
  context.eventType = known ? type : 'unknown';

  if (type === V2_TRACK_TYPE) return recordTrackEvent(payload, services, context);
  if (!V2_SHIPPED_TYPES.has(type) || !payload.resource_url) {
    log.info('shipping.v2_logged_only', { eventType: context.eventType });
    context.outcome = 'logged_only';
    return;
  }
  const client = services.shipStationV2;
  if (!client) return notConfigured(type, 'set SHIPSTATION_V2_API_KEY to read ShipStation V2 deliveries', context);
  const resourceUrl = payload.resource_url;
  await readAndApply(resourceUrl, type, async () => {
    if (client.kindOf(resourceUrl) !== undefined) return client.shipmentsAt(resourceUrl);
    log.warn('shipping.v2_resource_unexpected', { eventType: type });
    context.outcome = 'resource_unexpected';
    return undefined;
  }, services, context);
}

function notConfigured(eventType: string, hint: string, context: RequestContext): void {
  log.warn('shipping.resource_url_not_configured', { eventType, hint });
  context.outcome = 'resource_not_configured';
}

/** A batch read from ShipStation and applied; `read` answers undefined when it has set the outcome itself. */
async function readAndApply(
  resourceUrl: string,
  eventType: string,
  read: () => Promise<ShipmentsResult | undefined>,
  services: Services,
  context: RequestContext,
): Promise<void> {
  // The rate-limit hit is counted before an upstream is called (docs/decisions.md#d31).
  await countRateLimitHitNow();
  let result: ShipmentsResult | undefined;
  try {
    result = await read();
  } catch (error) {
    if (!(error instanceof ShipStationError)) throw error;
    if (isResourceUrlRefusal(error.failure)) {
      log.warn('shipping.resource_url_refused', { reason: error.failure, origin: error.origin });
      context.outcome = 'resource_url_refused';
      return;
    }
    log.error('shipping.resource_read_failed', { failure: error.failure, status: error.status });
    context.outcome = 'resource_read_failed';
    const reason = retryableShipStation(error).retryableFailure;
    if (reason) await queueForReplay(services.shippingReplay, { kind: 'resource', resourceUrl, eventType }, { orderId: undefined, reason });
    return;
  }
  if (result === undefined) return;
  await noteResourceRead(result, eventType, services);
  if (result.notices.length === 0) {
    context.outcome = 'no_shipments';
    return;
  }
  await applyNotices(result.notices, services, context);
}

async function applyNotices(notices: ShipmentsResult['notices'], services: Services, context: RequestContext): Promise<void> {
  const results: ShipResult[] = [];
  const numbers = new Map<string, string | undefined>();
  // One at a time: shipments of one batch may name the same order, and the lock then makes the later ones no-ops.
  for (const notice of notices) {
    // Out of time, it is queued untried: its store calls could only time out.
    const result: ShipResult =
      requestTimeLeftMs() < MIN_ATTEMPT_MS
        ? { orderId: parseOrderNumber(notice.orderNumber), outcome: 'no_time', retryableFailure: 'no_time' }
        : await markOrderShipped(notice, services, numbers);
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

async function noteResourceRead(result: ShipmentsResult, eventType: string, services: Services): Promise<void> {
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
  if (!unread) return;
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

async function recordTrackEvent(payload: V2Payload, services: Services, context: RequestContext): Promise<void> {
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
  const labelId = client && check?.allowed ? client.trackedLabelId(check.url) : undefined;
  const delivery = { orderNumber: undefined, trackingNumber: data.tracking_number, deliveredAt: deliveryDate(data.actual_delivery_date) };
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
