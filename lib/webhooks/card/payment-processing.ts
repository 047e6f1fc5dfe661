/**
 * `payment_intent.processing` (CARD_LIFECYCLE_EVENTS=async): a delayed method
 * (SEPA or ACH debit) was submitted and the money takes days to arrive. A
 * pending order goes `on-hold` with a customer note saying so, and
 * `_payment_processing_at`; it is not paid yet, so the later
 * `payment_intent.succeeded` takes it to `processing` by the spec's path, and a
 * `payment_intent.payment_failed` returns it to `pending` (payment-failed.ts).
 *
 * Out of order: a processing event older than a failure already recorded
 * (`_payment_failed_at` at or after the event's creation) changes nothing; an
 * order already paid or in any other status than pending is left as it is.
 * The write carries the event's receipt (exactly-once.ts), so the same event
 * never holds the order twice, whatever moved it back to pending meanwhile (the
 * shop, by hand).
 */
import { META } from '@/lib/orders/meta-keys';
import { buildOrderUpdate } from '@/lib/orders/mutation';
import { metaValue } from '@/lib/orders/normalize';
import { PAYMENT_PROCESSING_NOTE } from '@/lib/orders/notes';
import { isPaid } from '@/lib/orders/payable';
import { ORDER_STATUS } from '@/lib/order-statuses';
import type { Services } from '@/lib/services';
import type { StoreOrder } from '@/lib/store/types';
import { hasReceipt } from '@/lib/orders/receipts';
import { DUPLICATE_EVENT } from '@/lib/webhooks/card/exactly-once';
import { cardEventHandler, changed, unchanged, type Changed, type Unchanged } from '@/lib/webhooks/card/handler';

export type PaymentProcessingOutcome = Changed<'payment_processing_on_hold'> | Unchanged<'not_pending' | typeof DUPLICATE_EVENT>;

/** Whether the order is on hold because the service put it there for a delayed payment. */
export function awaitsDelayedPayment(order: StoreOrder): boolean {
  return order.status === ORDER_STATUS.onHold && !isPaid(order) && metaValue(order, META.paymentProcessingAt) !== undefined;
}

export async function holdForDelayedPayment(
  orderId: number,
  event: { id: string; created: number },
  services: Services,
): Promise<PaymentProcessingOutcome> {
  const store = services.store();
  const order = await store.getOrder(orderId);
  if (order.status !== ORDER_STATUS.pending || isPaid(order)) return unchanged('not_pending');
  if (hasReceipt(order, event.id)) return unchanged(DUPLICATE_EVENT);
  const failedAt = Date.parse(metaValue(order, META.paymentFailedAt) ?? '');
  if (event.created > 0 && Number.isFinite(failedAt) && failedAt >= event.created * 1000) return unchanged('not_pending');

  await store.updateOrder(
    orderId,
    buildOrderUpdate(order, {
      status: ORDER_STATUS.onHold,
      customerNote: PAYMENT_PROCESSING_NOTE,
      meta: { [META.paymentProcessingAt]: new Date().toISOString() },
      metaMode: 'append',
      receipt: event.id,
    }),
  );
  return changed('payment_processing_on_hold');
}

export const paymentProcessing = cardEventHandler({
  kind: 'payment_intent',
  setting: 'async',
  apply: (orderId, event, services) => holdForDelayedPayment(orderId, event, services),
});
