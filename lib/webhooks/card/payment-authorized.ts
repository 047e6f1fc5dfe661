/**
 * `payment_intent.amount_capturable_updated` (STRIPE_CAPTURE other than
 * `automatic`): the customer's card was authorized for a manual-capture
 * intent; the money is reserved, not taken. A pending order goes `on-hold`
 * with a customer note saying so and `_payment_authorized_at`. It is not paid:
 * no paid date, no transaction id. The payment is recorded later by
 * `payment_intent.succeeded`, once the authorization is captured (at shipping
 * with `on_shipment`, by the shop's "Capture charge" with `manual`, or by the
 * expiry cron), through the spec's success path.
 *
 * An order in any other status than pending, or already paid, is left as it
 * is: the event came late (the capture's success was recorded first) or the
 * shop moved the order. The write carries the event's receipt (exactly-once.ts).
 */
import { META } from '@/lib/orders/meta-keys';
import { buildOrderUpdate } from '@/lib/orders/mutation';
import { metaValue } from '@/lib/orders/normalize';
import { PAYMENT_AUTHORIZED_NOTE } from '@/lib/orders/notes';
import { isPaid } from '@/lib/orders/payable';
import { hasReceipt } from '@/lib/orders/receipts';
import { ORDER_STATUS } from '@/lib/order-statuses';
import type { Services } from '@/lib/services';
import { releaseAuthorization } from '@/lib/store-callbacks/authorization';
import { checkoutIntentId } from '@/lib/store-callbacks/card-payment';
import type { StoreOrder } from '@/lib/store/types';
import { DUPLICATE_EVENT } from '@/lib/webhooks/card/exactly-once';
import { cardEventHandler, changed, unchanged, type Changed, type Unchanged } from '@/lib/webhooks/card/handler';

export type PaymentAuthorizedOutcome = Changed<'authorized_on_hold' | 'released_cancelled_order'> | Unchanged<'not_pending' | 'already_paid' | typeof DUPLICATE_EVENT>;

/**
 * Whether the order holds an authorization whose payment is not recorded yet: authorized by the
 * service's own write, and no payment written since (`_provider_payment_intent_id` is the service's
 * record of one that the store shows back, unlike `_paid_date`, which WooCommerce hides; WooCommerce
 * may stamp `date_paid` itself when a shipped order becomes `completed`, so that says nothing).
 */
export function awaitsCapturedPayment(order: StoreOrder): boolean {
  return metaValue(order, META.paymentAuthorizedAt) !== undefined && metaValue(order, META.providerPaymentIntentId) === undefined;
}

/** A Radar review opened on the order's payment and not closed yet (review.ts). */
export function underReview(order: StoreOrder): boolean {
  // An open review's closed reason is written empty, which metaValue reads as absent.
  return metaValue(order, META.reviewId) !== undefined && metaValue(order, META.reviewClosedReason) === undefined;
}

/**
 * Whether the order is on hold for nothing but its authorization: what shipping may capture under
 * on_shipment. An open Radar review holds it too: a payment Stripe flagged is not captured until
 * the shop approves it.
 */
export function heldForCapture(order: StoreOrder): boolean {
  return order.status === ORDER_STATUS.onHold && !isPaid(order) && awaitsCapturedPayment(order) && !underReview(order);
}

export const paymentAuthorized = cardEventHandler({
  kind: 'payment_intent',
  setting: 'manual_capture',
  apply: async (orderId, event, services: Services): Promise<PaymentAuthorizedOutcome> => {
    const store = services.store();
    const order = await store.getOrder(orderId);
    // Authorized after the order was cancelled (it was paid in another tab): the hold is released at once.
    if (order.status === 'cancelled' && event.intent.intentId === checkoutIntentId(order)) {
      if (hasReceipt(order, event.id)) return unchanged(DUPLICATE_EVENT);
      await releaseAuthorization(order, event.intent.intentId, services, 'authorized after the order was cancelled');
      await store.updateOrder(orderId, buildOrderUpdate(order, { receipt: event.id }));
      return changed('released_cancelled_order');
    }
    if (isPaid(order)) return unchanged('already_paid');
    if (order.status !== ORDER_STATUS.pending) return unchanged('not_pending');
    if (hasReceipt(order, event.id)) return unchanged(DUPLICATE_EVENT);
    await store.updateOrder(
      orderId,
      buildOrderUpdate(order, {
        status: ORDER_STATUS.onHold,
        customerNote: PAYMENT_AUTHORIZED_NOTE,
        meta: { [META.paymentAuthorizedAt]: new Date().toISOString() },
        metaMode: 'append',
        receipt: event.id,
      }),
    );
    return changed('authorized_on_hold');
  },
});
