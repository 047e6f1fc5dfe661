// A second payment for a paid order, logged as `card.duplicate_payment` (docs/integrations/stripe.md#a-second-payment-for-a-paid-order).
// `_payment_intent_id` is no proof of payment: checkout hands it out before anyone pays.
import { log } from '@/lib/log';
import { META } from '@/lib/orders/meta-keys';
import type { StoreOrder } from '@/lib/store/types';
import type { PaymentIntentFacts } from '@/lib/card/events';

export interface DuplicatePayment {
  /** Undefined when the order was paid without a card payment on record. */
  paidIntentId: string | undefined;
}

/** Every recorded intent counts (webhooks append), and so does the charge the store holds as `transaction_id`. */
export function duplicatePaymentOf(order: StoreOrder, intent: Pick<PaymentIntentFacts, 'intentId' | 'chargeId'>): DuplicatePayment | undefined {
  const recorded = order.meta_data
    .filter((m) => m.key === META.providerPaymentIntentId && typeof m.value === 'string' && m.value !== '')
    .map((m) => m.value as string);
  if (recorded.includes(intent.intentId)) return undefined;
  if (intent.chargeId !== '' && order.transaction_id === intent.chargeId) return undefined;
  return { paidIntentId: recorded.at(-1) };
}

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

export const OTHER_PAYMENT = 'other_payment';

/** E.g. the refund of a duplicate: it says nothing of the order's own payment, so it is only logged. */
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
