/**
 * `payment_intent.payment_failed` (docs/contract.md#spec-4-3, docs/contract.md#spec-3): the customer's payment
 * did not go through. A pending order keeps its status (it is not cancelled)
 * and records the failure; a registered customer gets the cart back first so
 * the note can say so. An order in any other status is left alone, except,
 * with CARD_LIFECYCLE_EVENTS=async, an order on hold for a delayed payment
 * (payment-processing.ts), which goes back to pending with the same record.
 *
 * Exactly once: a pending order gives no status gate against the same failure
 * applied twice, so the event's receipt, written with the note and meta, is
 * what stops a redelivery (exactly-once.ts). The cart is restored at most once
 * per failure, however often the event comes and whether or not the order
 * write landed: the restore is keyed by the event id, and the companion plugin
 * restores once per key and customer, answering a repeated key without
 * touching the cart (a cart the customer edited since is never overwritten).
 * Restoring before the write, keyed, rather than after it: the note and
 * `_cart_restored_on_failure` must say whether the cart came back, and they
 * travel in the write that carries the receipt; a restore after the write
 * would either need a second order write to record its result or be skipped
 * for good whenever the answer to the first was lost.
 */
import { META } from '@/lib/orders/meta-keys';
import { buildOrderUpdate } from '@/lib/orders/mutation';
import { metaValue } from '@/lib/orders/normalize';
import { paymentFailedNote } from '@/lib/orders/notes';
import { hasReceipt, holdsReceipts } from '@/lib/orders/receipts';
import { ORDER_STATUS } from '@/lib/order-statuses';
import type { Services } from '@/lib/services';
import type { StoreOrder } from '@/lib/store/types';
import { restoreCartAfterFailure } from '@/lib/webhooks/card/customer-cart';
import type { PaymentIntentFacts } from '@/lib/card/events';
import { DUPLICATE_EVENT, UNVERIFIABLE_EVENT } from '@/lib/webhooks/card/exactly-once';
import { cardEventHandler, changed, unchanged, type ApplyOptions, type Changed, type Unchanged } from '@/lib/webhooks/card/handler';
import { awaitsDelayedPayment } from '@/lib/webhooks/card/payment-processing';

export type PaymentFailedOutcome = Changed<'payment_failure_recorded'> | Unchanged<'not_pending' | typeof DUPLICATE_EVENT> | typeof UNVERIFIABLE_EVENT;

export const paymentFailed = cardEventHandler({
  kind: 'payment_intent',
  setting: 'spec',
  apply: (orderId, event, services, options) => applyPaymentFailed(orderId, event.id, event.intent, services, options),
});

/**
 * An order that records a failure but holds no receipt was written before receipts existed: it cannot
 * say whether this event was that failure. Asked only for events older than the memory of applied
 * events (reconciliation after a restart without Redis), which is all that could have known.
 */
function failureRecordedWithoutReceipts(order: StoreOrder): boolean {
  return !holdsReceipts(order) && metaValue(order, META.paymentFailedAt) !== undefined;
}

export async function applyPaymentFailed(
  orderId: number,
  eventId: string,
  intent: PaymentIntentFacts,
  services: Services,
  options: ApplyOptions = {},
): Promise<PaymentFailedOutcome> {
  const store = services.store();
  const order = await store.getOrder(orderId);
  // CARD_LIFECYCLE_EVENTS=async: a delayed payment that failed returns its on-hold order to pending.
  const delayed = services.config.lifecycleEvents.has('async') && awaitsDelayedPayment(order);
  if (order.status !== ORDER_STATUS.pending && !delayed) return unchanged('not_pending');
  if (hasReceipt(order, eventId)) return unchanged(DUPLICATE_EVENT);
  if (options.olderThanMemory && failureRecordedWithoutReceipts(order)) return UNVERIFIABLE_EVENT;

  const restored = order.customer_id > 0 && (await restoreCartAfterFailure(store, order.customer_id, orderId, eventId));
  await store.updateOrder(
    orderId,
    buildOrderUpdate(order, {
      ...(delayed ? { status: ORDER_STATUS.pending } : {}),
      customerNote: paymentFailedNote(intent.errorMessage, restored),
      meta: {
        [META.paymentFailedAt]: new Date().toISOString(),
        [META.paymentError]: intent.errorMessage,
        [META.cartRestoredOnFailure]: restored ? 'yes' : 'no',
      },
      metaMode: 'append',
      receipt: eventId,
    }),
  );
  return changed('payment_failure_recorded');
}
