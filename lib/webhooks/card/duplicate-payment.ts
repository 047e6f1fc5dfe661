/**
 * A second payment for a paid order (docs/decisions.md#d12): a `payment_intent.succeeded`
 * for an order that is already paid is answered as the spec says (200, no
 * write), but when the money came through another intent than the one that paid
 * the order, the customer was charged twice. That must never be silent: it is
 * logged at error level as `card.duplicate_payment`, for the shop to refund.
 *
 * Which payment paid the order: the intent the card webhook recorded in
 * `_provider_payment_intent_id` (webhooks append, so every recorded one
 * counts). The same intent delivered again, or under another event id, is the
 * same payment and raises nothing; so is a charge the store already holds as
 * the order's `transaction_id` (an order recorded by another integration).
 * An order paid with no card payment on record (manual payment, marked paid by
 * hand) that now receives a card payment was paid twice as well.
 * `_payment_intent_id` is not proof of payment: it is only the intent the
 * checkout handed out, which may never have been paid.
 */
import { log } from '@/lib/log';
import { META } from '@/lib/orders/meta-keys';
import type { StoreOrder } from '@/lib/store/types';
import type { PaymentIntentFacts } from '@/lib/card/events';


export interface DuplicatePayment {
  /** The intent that paid the order first, when the card webhook recorded one. */
  paidIntentId: string | undefined;
}

/** The duplicate this payment is, or undefined when it is the payment already recorded. */
export function duplicatePaymentOf(order: StoreOrder, intent: Pick<PaymentIntentFacts, 'intentId' | 'chargeId'>): DuplicatePayment | undefined {
  const recorded = order.meta_data
    .filter((m) => m.key === META.providerPaymentIntentId && typeof m.value === 'string' && m.value !== '')
    .map((m) => m.value as string);
  if (recorded.includes(intent.intentId)) return undefined;
  if (intent.chargeId !== '' && order.transaction_id === intent.chargeId) return undefined;
  return { paidIntentId: recorded.at(-1) };
}

/** Logs `card.duplicate_payment` when a success event for an already paid order is a second payment. */
export function reportDuplicatePayment(orderId: number, order: StoreOrder, intent: PaymentIntentFacts): boolean {
  const duplicate = duplicatePaymentOf(order, intent);
  if (duplicate === undefined) return false;
  log.error('card.duplicate_payment', {
    orderId,
    paidIntentId: duplicate.paidIntentId,
    duplicateIntentId: intent.intentId,
    duplicateChargeId: intent.chargeId || undefined,
    amount: intent.amount,
    currency: intent.currency,
    orderStatus: order.status,
    orderPaymentMethod: order.payment_method?.slice(0, 50) || undefined,
    action: 'refund the duplicate payment in the Stripe dashboard',
  });
  return true;
}

/** The outcome of a refund or dispute event that concerns another payment than the order's. */
export const OTHER_PAYMENT = 'other_payment';

/**
 * A refund or a dispute of a payment other than the one that paid the order (the duplicate a
 * shop refunds after `card.duplicate_payment`): it says nothing about the order's own payment,
 * so it leaves the order alone. Logged for the shop, never applied to the order.
 */
export function concernsOtherPayment(
  orderId: number,
  order: StoreOrder,
  payment: { intentId: string | undefined; chargeId: string },
  what: 'refund' | 'dispute' | 'review' | 'fraud warning',
): boolean {
  const other = duplicatePaymentOf(order, { intentId: payment.intentId ?? '', chargeId: payment.chargeId });
  if (other === undefined) return false;
  log.warn('card.other_payment_event', {
    orderId,
    kind: what,
    intentId: payment.intentId,
    chargeId: payment.chargeId || undefined,
    paidIntentId: other.paidIntentId,
    action: 'nothing recorded on the order: this payment is not the one that paid it',
  });
  return true;
}
