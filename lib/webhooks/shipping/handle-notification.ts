/**
 * POST /api/shipping/webhook, after the rate limit and the shared secret
 * (spec 4.4 steps 2-5, DECISIONS 11).
 *
 * Shipped notifications name their shipment inline (`order_number`,
 * `tracking_number`, `carrier`, `ship_date`) or, as real ShipStation does,
 * only by `resource_url`, which is then read from ShipStation and each
 * non-voided shipment in it is applied as if it had come inline. Order
 * notifications and unknown types are logged only. Nothing here throws for a
 * business outcome: the sender always gets 200 and the reason is in the log.
 * A shipment the store could not take now (unreachable, timeout, 5xx, order
 * busy), or a batch ShipStation could not serve now, goes to the replay queue.
 */
import type { RequestContext } from '@/lib/http/route';
import { log } from '@/lib/log';
import { settlePendingRateLimit } from '@/lib/security/pending-rate-limit';
import type { Services } from '@/lib/services';
import { isResourceUrlRefusal } from '@/lib/shipping/resource-url';
import { ShipStationError, type ShipmentNotice } from '@/lib/shipping/shipstation';
import { markOrderShipped, type ShipResult } from '@/lib/webhooks/shipping/mark-shipped';
import { queueForReplay } from '@/lib/webhooks/shipping/replay-queue';
import {
  hasOrderNumber,
  ORDER_EVENT_TYPES,
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

  const results: ShipResult[] = [];
  // One at a time: shipments of one batch may name the same order, and the lock then makes the later ones no-ops.
  for (const notice of notices) {
    const result = await markOrderShipped(notice, services);
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

/**
 * ShipStation did not serve the batch now (down, slow, over its rate, or refusing credentials
 * being rotated): it is still to be read. A refused URL or a malformed answer will not get better.
 */
export function isRetryableShipStationFailure(error: ShipStationError): boolean {
  if (error.failure === 'unavailable' || error.failure === 'timeout' || error.failure === 'rate_limited') return true;
  return error.failure === 'rejected' && (error.status === 401 || error.status === 403);
}

/** The shipments a shipped notification is about, or undefined when they cannot be known (the reason is logged). */
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
  // ShipStation is an upstream: the request's rate-limit hit is counted before it is called, not
  // by the order's lock afterwards (lib/security/pending-rate-limit.ts).
  await settlePendingRateLimit();

  try {
    const result = await shipStation.shipmentsAt(payload.resource_url);
    log.info('shipping.resource_read', {
      eventType: payload.resource_type,
      shipments: result.notices.length,
      voided: result.voided,
      malformed: result.malformed || undefined,
      truncated: result.truncated || undefined,
    });
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
          { orderId: undefined, reason: `shipstation:${error.failure}` },
        );
      }
    }
    return undefined;
  }
}
