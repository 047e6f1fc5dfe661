/**
 * `payment_intent.amount_capturable_updated` (STRIPE_CAPTURE other than `automatic`): the card was
 * authorized; the money is reserved, not taken. A transition of the payment model: the authorization is a
 * hold ("awaiting capture") with its own deadline (`capture_before`, read from the charge), a customer
 * note saying what the capture mode does, and `_payment_authorized_at`. Not paid: `payment_intent.succeeded`
 * records the payment once it is captured (at shipping, from the admin or by the expiry cron).
 */
import type { PaymentIntentFacts } from '@/lib/card/events';
import { META } from '@/lib/orders/meta-keys';
import { paymentAuthorizedNote } from '@/lib/orders/notes';
import { holdsOf } from '@/lib/orders/payment-state';
import { isPaid } from '@/lib/orders/payable';
import { ORDER_STATUS } from '@/lib/order-statuses';
import type { Services } from '@/lib/services';
import type { StoreOrder } from '@/lib/store/types';
import { DUPLICATE_EVENT } from '@/lib/webhooks/card/exactly-once';
import { cardEventHandler, changed, unchanged, type Changed, type Unchanged } from '@/lib/webhooks/card/handler';
import { applyTransition, currentPaymentState } from '@/lib/webhooks/card/transition';

export type PaymentAuthorizedOutcome = Changed<'authorized_on_hold'> | Unchanged<'not_pending' | 'already_paid' | typeof DUPLICATE_EVENT>;

/** Whether the order holds an authorization whose payment is not recorded yet. */
export function awaitsCapturedPayment(order: StoreOrder): boolean {
  return holdsOf(currentPaymentState(order)).has('capture');
}

/** A Radar review of the order's payment is open. */
export function underReview(order: StoreOrder): boolean {
  return holdsOf(currentPaymentState(order)).has('review');
}

/** Whether nothing but its authorization holds the order: what shipping (on_shipment) and the expiry cron may capture. */
export function heldForCapture(order: StoreOrder): boolean {
  if (order.status !== ORDER_STATUS.onHold && order.status !== ORDER_STATUS.authorized) return false;
  const holds = holdsOf(currentPaymentState(order));
  return !isPaid(order) && holds.size === 1 && holds.has('capture');
}

export async function recordAuthorization(
  orderId: number,
  event: { id: string; created: number },
  intent: PaymentIntentFacts,
  services: Services,
): Promise<PaymentAuthorizedOutcome> {
  const order = await services.store().getOrder(orderId);
  if (isPaid(order)) return unchanged('already_paid');
  // A review may hold the order already (it can arrive first); any other status is the shop's.
  if (order.status !== ORDER_STATUS.pending && order.status !== ORDER_STATUS.onHold) return unchanged('not_pending');
  const recorded = await applyTransition(
    order,
    { kind: 'authorized', at: event.created, intentId: intent.intentId, chargeId: intent.chargeId, },
    services,
    () => ({
      customerNote: paymentAuthorizedNote(services.config.capture),
      meta: { [META.paymentAuthorizedAt]: new Date().toISOString() },
      metaMode: 'append',
    }),
  );
  return recorded.outcome === 'applied' ? changed('authorized_on_hold') : unchanged(DUPLICATE_EVENT);
}

export const paymentAuthorized = cardEventHandler({
  kind: 'payment_intent',
  setting: 'manual_capture',
  apply: (orderId, event, services) => recordAuthorization(orderId, event, event.intent, services),
});
