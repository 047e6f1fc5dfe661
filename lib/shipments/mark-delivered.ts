// A V2 delivery (`DE`) recorded once under the order's lock, `_delivered_at` its receipt (docs/decisions.md#d40). Only a
// `shipped` order is completed: the fallback `completed` already is, and a carrier's scan never completes an unshipped order.
// An order whose shipment may still land waits in the replay; any other is left alone.
import { OrderBusyError, StoreError } from '@/lib/errors';
import { log } from '@/lib/log';
import { META } from '@/lib/orders/meta-keys';
import { metaValue } from '@/lib/orders/normalize';
import { buildOrderUpdate } from '@/lib/orders/mutation';
import { shopNotes } from '@/lib/orders/notes';
import { ORDER_STATUS } from '@/lib/order-statuses';
import type { Services } from '@/lib/services';
import type { DeliveryNotice } from '@/lib/shipment-notices';
import { addShopNoteOnce } from '@/lib/orders/shop-note';
import { isFinalStoreFailure, readShipStation } from '@/lib/shipments/failures';
import { parseOrderNumber, SHIPPED_STATUSES } from '@/lib/shipments/mark-shipped';
import { checkNoteDetail } from '@/lib/shipments/note-details';

// A delivery scanned before its shipment was applied (a queued label read, events out of order).
const AWAITING_SHIPMENT_STATUSES: ReadonlySet<string> = new Set([
  ORDER_STATUS.processing,
  ORDER_STATUS.onHold,
  ORDER_STATUS.authorized,
  ORDER_STATUS.awaitingShipment,
]);

function retryable(error: StoreError): { retryableFailure?: string } {
  return isFinalStoreFailure(error) ? {} : { retryableFailure: `store:${error.failure}` };
}

async function markOrderDelivered(notice: DeliveryNotice, services: Services) {
  const orderId = parseOrderNumber(notice.orderNumber);
  if (orderId === undefined) return { orderId, outcome: 'bad_order_number' as const };
  // Shown to the shop only, but still ShipStation's text: kept to the shapes a tracking number and a date have.
  const tracking = notice.trackingNumber && !checkNoteDetail('trackingNumber', notice.trackingNumber) ? notice.trackingNumber : undefined;
  // The webhook checked the date already (deliveryDate); a refused one kept here still reads the same on every retry.
  const deliveredAt = checkNoteDetail('shipDate', notice.deliveredAt) ? 'date not given' : notice.deliveredAt;
  try {
    return await services.orderLocks.withOrderLock(orderId, async () => {
      const store = services.store();
      const order = await store.getOrder(orderId);
      if (metaValue(order, META.deliveredAt)) {
        log.info('shipping.already_delivered', { orderId });
        return { orderId, outcome: 'already_delivered' as const };
      }
      if (!SHIPPED_STATUSES.has(order.status)) {
        const waits = AWAITING_SHIPMENT_STATUSES.has(order.status);
        log.info(waits ? 'shipping.delivery_before_shipment' : 'shipping.delivery_order_not_shipped', { orderId, orderStatus: order.status });
        return waits
          ? { orderId, outcome: 'not_shipped_yet' as const, retryableFailure: 'not_shipped_yet' }
          : { orderId, outcome: 'ignored_status' as const };
      }
      await addShopNoteOnce(store, orderId, shopNotes.shipmentDelivered(tracking, deliveredAt));
      const complete = services.config.shippingV2.deliveredCompletes && order.status === ORDER_STATUS.shipped;
      await store.updateOrder(
        orderId,
        buildOrderUpdate(order, {
          ...(complete ? { status: ORDER_STATUS.completed } : {}),
          meta: { [META.deliveredAt]: deliveredAt },
          metaMode: 'replace',
        }),
      );
      log.info('shipping.delivered', { orderId, orderStatus: order.status, completed: complete });
      return { orderId, outcome: complete ? ('delivered_completed' as const) : ('delivered' as const) };
    });
  } catch (error) {
    if (error instanceof OrderBusyError) return { orderId, outcome: 'order_busy' as const, retryableFailure: 'order_busy' };
    if (!(error instanceof StoreError)) throw error;
    log.warn('shipping.delivery_write_failed', { orderId, failure: error.failure, status: error.status, code: error.code });
    return { orderId, outcome: 'update_failed' as const, ...retryable(error) };
  }
}

/** Fixed once per delivery, so the note a retry writes is the same text as the first. */
export function deliveryDate(carrierDate: string | undefined): string {
  return carrierDate !== undefined && !checkNoteDetail('shipDate', carrierDate) ? carrierDate : new Date().toISOString();
}

/** A V2 delivery names its label only: the label's order number is read first, unless a replay kept it. */
export async function deliverThroughLabel(labelId: string | undefined, delivery: DeliveryNotice, services: Services) {
  let orderNumber = delivery.orderNumber;
  if (orderNumber === undefined) {
    const client = services.shipStationV2;
    if (!client || !labelId) return { orderId: undefined, orderNumber, outcome: 'delivery_unmatched', retryableFailure: 'shipstation:not_configured' };
    const read = await readShipStation(() => client.labelOrderNumber(labelId));
    if (!('value' in read)) return { orderId: undefined, orderNumber, ...read };
    if (typeof read.value === 'object') {
      log.info('shipping.delivery_label_skipped', { reason: read.value.skipped });
      return { orderId: undefined, orderNumber, outcome: 'delivery_label_skipped' };
    }
    orderNumber = read.value;
  }
  if (orderNumber === undefined) {
    log.warn('shipping.delivery_unmatched', { reason: 'no_order_number' });
    return { orderId: undefined, orderNumber, outcome: 'delivery_unmatched' };
  }
  const result = await markOrderDelivered({ ...delivery, orderNumber }, services);
  return { ...result, orderNumber };
}
