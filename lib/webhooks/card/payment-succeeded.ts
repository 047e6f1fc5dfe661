// payment_intent.succeeded (docs/contract.md#spec-4-3, docs/contract.md#payment-life); superseded state as
// docs/decisions.md#d13 says. The cart is cleared only by the delivery that recorded the payment.
import { paymentMethodTitle } from '@/lib/card/payment-methods';
import { InvalidCardEventError } from '@/lib/errors';
import type { StoreOrder } from '@/lib/store/types';
import { log } from '@/lib/log';
import { META } from '@/lib/orders/meta-keys';
import { metaValue, normalizeOrder } from '@/lib/orders/normalize';
import { AMOUNT_MISMATCH_NOTE, isSupersededByPayment, PAYMENT_RECEIVED_NOTE, shopNotes } from '@/lib/orders/notes';
import { formatMinorUnits } from '@/lib/money';
import { isPaid } from '@/lib/orders/payable';
import type { Services } from '@/lib/services';
import { clearCartAfterPayment } from '@/lib/webhooks/card/customer-cart';
import { reportDuplicatePayment } from '@/lib/webhooks/card/duplicate-payment';
import type { PaymentIntentFacts } from '@/lib/card/events';
import { DUPLICATE_EVENT } from '@/lib/webhooks/card/exactly-once';
import { cardEventHandler, changed, unchanged, type Changed, type Unchanged } from '@/lib/webhooks/card/handler';
import { currentPaymentState } from '@/lib/orders/order-payment';
import { applyTransition } from '@/lib/webhooks/card/transition';

export type PaymentSucceededOutcome = Changed<'paid' | 'amount_mismatch_on_hold'> | Unchanged<'already_paid' | typeof DUPLICATE_EVENT>;

export const paymentSucceeded = cardEventHandler({
  kind: 'payment_intent',
  setting: 'spec',
  apply: (orderId, event, services) => applyPaymentSucceeded(orderId, event, event.intent, services),
});

export async function applyPaymentSucceeded(
  orderId: number,
  event: { id: string; created: number },
  intent: PaymentIntentFacts,
  services: Services,
): Promise<PaymentSucceededOutcome> {
  const paidAmount = intent.amount;
  if (paidAmount === undefined) throw new InvalidCardEventError('Webhook Error: payment intent has no amount');

  const store = services.store();
  const order = await store.getOrder(orderId);
  const state = currentPaymentState(order);
  if (state.paid?.intentId === intent.intentId) return unchanged('already_paid');
  // The payment the facts awaited (captured at shipping, a debit) is recorded whatever status the order has meanwhile.
  const awaited =
    state.authorization?.intentId === intent.intentId ||
    (state.attempt?.intentId === intent.intentId && (state.attempt.kind === 'processing' || state.attempt.kind === 'authorized'));
  if (state.paid || (isPaid(order) && !awaited)) {
    reportDuplicatePayment(orderId, order, intent);
    return unchanged('already_paid');
  }

  const normalized = normalizeOrder(order);
  const sameCurrency = intent.currency === undefined || intent.currency === normalized.currency.toLowerCase();
  const amountMatches = sameCurrency && paidAmount === normalized.charge_cents;
  const fact = { kind: 'succeeded' as const, at: event.created, intentId: intent.intentId, chargeId: intent.chargeId, amountMatches };
  if (!amountMatches) {
    log.warn('card_webhook.amount_mismatch', {
      orderId,
      currency: normalized.currency,
      paidCurrency: intent.currency,
      paidAmount,
      expectedAmount: normalized.charge_cents,
    });
    const held = await applyTransition(order, fact, services, () => ({ customerNote: AMOUNT_MISMATCH_NOTE }));
    return held.outcome === 'applied' ? changed('amount_mismatch_on_hold') : unchanged(DUPLICATE_EVENT);
  }

  const paidAt = new Date();
  const now = paidAt.toISOString();
  const { cardId } = services.config.paymentMethods;
  const methodTitle = paymentMethodTitle(intent.paymentMethodType, services.config.paymentMethods.cardTitle);
  // `_payment_method`, `_payment_method_title`, `_transaction_id` are properties (docs/decisions.md#payment-properties).
  const meta: Record<string, string> = {
    [META.providerPaymentIntentId]: intent.intentId,
    [META.providerChargeId]: intent.chargeId,
    [META.paidDate]: now,
  };
  if (metaValue(order, META.manualPaymentStatus) !== undefined) meta[META.manualPaymentStatus] = 'superseded';
  const rounded = normalized.charge_cents !== normalized.total_cents;
  const paid = await applyTransition(order, fact, services, (transition) => ({
    // A three-decimal total Stripe charged in multiples of 10: the shop sees why the two differ.
    ...(rounded
      ? { shopNote: shopNotes.chargeRounded(formatMinorUnits(paidAmount, normalized.currency), formatMinorUnits(normalized.total_cents, normalized.currency), normalized.currency) }
      : {}),
    ...(isSupersededByPayment(order.customer_note) ? { customerNote: PAYMENT_RECEIVED_NOTE } : {}),
    meta,
    metaMode: 'append',
    paymentMethod: { id: cardId, title: methodTitle, transactionId: intent.chargeId },
    datePaid: now,
    customerId: order.customer_id,
    ...(storeStampsPaidDate(order, transition.status) ? {} : { metaValues: { [META.datePaidInternal]: String(Math.floor(paidAt.getTime() / 1000)) } }),
  }));
  if (paid.outcome !== 'applied') return unchanged(DUPLICATE_EVENT);

  if (order.customer_id > 0) await clearCartAfterPayment(store, order.customer_id, orderId);
  return changed('paid');
}

/** WC_Order::maybe_set_date_paid stamps it on a change to the payment-complete status; else `_date_paid` (docs/decisions.md#d14). */
export function storeStampsPaidDate(order: Pick<StoreOrder, 'status' | 'date_paid' | 'needs_processing'>, status: string | undefined): boolean {
  if (order.date_paid) return true;
  // A store that does not say whether the order needs processing gets the date written.
  if (status === undefined || status === order.status || typeof order.needs_processing !== 'boolean') return false;
  const paymentComplete = order.needs_processing ? 'processing' : 'completed';
  return status === paymentComplete || (paymentComplete === 'processing' && status === 'completed');
}
