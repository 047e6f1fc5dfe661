/**
 * One shipment applied to one order (spec 4.4 step 3), exactly once.
 *
 * Under the order's lock: fetch the order, act only when it is `processing`
 * or `awaiting_shipment`, then write status `shipped`, the tracking note and
 * the four tracking meta keys (appended). A duplicate delivery, even a
 * concurrent one, waits for the lock and then finds the order no longer in
 * a shippable status, so it writes nothing.
 */
import { OrderBusyError, StoreError } from '@/lib/errors';
import { log } from '@/lib/log';
import { buildOrderUpdate } from '@/lib/orders/mutation';
import { shippedNote } from '@/lib/orders/notes';
import type { Services } from '@/lib/services';
import type { ShipmentNotice } from '@/lib/shipping/shipstation';
import { META } from '@/lib/orders/meta-keys';
import type { StoreOrder } from '@/lib/store/types';
import { customerSafeNotice } from '@/lib/webhooks/shipping/note-details';
import { parseOrderNumber } from '@/lib/webhooks/shipping/payload';
import { FALLBACK_STATUS, SHIPPED_STATUS } from '@/lib/store/shipped-status';

export const SHIPPABLE_STATUSES: ReadonlySet<string> = new Set(['processing', 'awaiting_shipment']);

export type ShipOutcome =
  | 'shipped'
  | 'completed_fallback'
  | 'bad_order_number'
  | 'order_fetch_failed'
  | 'ignored_status'
  | 'update_failed'
  | 'order_busy';

export interface ShipResult {
  orderId: number | undefined;
  outcome: ShipOutcome;
  /**
   * Set when the store could not be reached (unreachable, timeout, 5xx) or the order was
   * busy: the shipment is still to be applied and goes to the replay queue. An identifier.
   */
  retryableFailure?: string;
}

type LockedResult = Omit<ShipResult, 'orderId'>;

/**
 * A store failure worth trying again later: the store did not answer, or the call was not
 * sent because every store slot was taken (`busy`), not "this order cannot be".
 */
function retryable(error: StoreError): { retryableFailure?: string } {
  const later = error.failure === 'unavailable' || error.failure === 'timeout' || error.failure === 'busy';
  return later ? { retryableFailure: `store:${error.failure}` } : {};
}

export async function markOrderShipped(received: ShipmentNotice, services: Services): Promise<ShipResult> {
  const orderId = parseOrderNumber(received.orderNumber);
  if (orderId === undefined) return { orderId, outcome: 'bad_order_number' };
  const { notice, refused } = customerSafeNotice(received);
  // Field names, reasons and lengths only: a refused value may be exactly the text someone wanted shown.
  for (const { field, reason, length } of refused) log.warn('shipping.detail_refused', { orderId, field, reason, length });

  try {
    const result = await services.orderLocks.withOrderLock(orderId, () => shipLocked(orderId, notice, services));
    return { orderId, ...result };
  } catch (error) {
    if (error instanceof OrderBusyError) return { orderId, outcome: 'order_busy', retryableFailure: 'order_busy' };
    throw error;
  }
}

async function shipLocked(orderId: number, notice: ShipmentNotice, services: Services): Promise<LockedResult> {
  const { shippedStatus } = services;
  const store = services.store();
  let order: StoreOrder;
  try {
    order = await store.getOrder(orderId);
  } catch (error) {
    if (!(error instanceof StoreError)) throw error;
    log.warn('shipping.order_fetch_failed', { orderId, failure: error.failure, status: error.status, code: error.code });
    return { outcome: 'order_fetch_failed', ...retryable(error) };
  }
  if (!SHIPPABLE_STATUSES.has(order.status)) {
    log.info('shipping.order_not_shippable', { orderId, orderStatus: order.status });
    return { outcome: 'ignored_status' };
  }

  const now = new Date().toISOString();
  const change = {
    customerNote: shippedNote({ trackingNumber: notice.trackingNumber, carrier: notice.carrier, shipDate: notice.shipDate }),
    meta: {
      [META.trackingNumber]: notice.trackingNumber ?? '',
      [META.shippingCarrier]: notice.carrier ?? '',
      [META.shippedDate]: notice.shipDate ?? now,
      [META.shipstationWebhookReceivedAt]: now,
    },
    metaMode: 'append' as const,
  };

  const status = await shippedStatus.statusToWrite();
  try {
    await store.updateOrder(orderId, buildOrderUpdate(order, { ...change, status }));
    return { outcome: status === SHIPPED_STATUS ? 'shipped' : 'completed_fallback' };
  } catch (error) {
    if (!(error instanceof StoreError)) throw error;
    if (status !== SHIPPED_STATUS || !isUnknownStatus(error)) return updateFailed(orderId, error);
  }

  // The store has no `shipped` status (DECISIONS 9). WordPress validates a request before
  // changing anything, so the refused write left the order as fetched: the same update
  // with `completed` is built from the same snapshot.
  await shippedStatus.rememberShippedMissing();
  log.warn('shipping.status_fallback', { orderId, from: SHIPPED_STATUS, to: FALLBACK_STATUS });
  try {
    await store.updateOrder(orderId, buildOrderUpdate(order, { ...change, status: FALLBACK_STATUS }));
    return { outcome: 'completed_fallback' };
  } catch (error) {
    if (!(error instanceof StoreError)) throw error;
    return updateFailed(orderId, error);
  }
}

function isUnknownStatus(error: StoreError): boolean {
  return error.failure === 'invalid_param' && error.code === 'rest_invalid_param';
}

function updateFailed(orderId: number, error: StoreError): LockedResult {
  log.warn('shipping.order_update_failed', { orderId, failure: error.failure, status: error.status, code: error.code });
  return { outcome: 'update_failed', ...retryable(error) };
}
