/** An order's payment facts read from the order, and the predicates use cases ask of them. */
import type { NotPayableReason } from '@/lib/errors';
import { log } from '@/lib/log';
import { META } from '@/lib/orders/meta-keys';
import { metaValue } from '@/lib/orders/normalize';
import { AMOUNT_MISMATCH_NOTE } from '@/lib/orders/notes';
import { holdsOf, observeShop, parsePaymentState, PAYMENT_STATE_META, rebuildPaymentState, type PaymentState } from '@/lib/orders/payment-state';
import { ORDER_STATUS, PAID_STATUSES } from '@/lib/order-statuses';
import type { StoreOrder } from '@/lib/store/types';

/** Paid and payable (docs/decisions.md#d8). */
export function isPaid(order: Pick<StoreOrder, 'status' | 'date_paid'>): boolean {
  return Boolean(order.date_paid) || PAID_STATUSES.has(order.status);
}

/** Why an order cannot be paid, or undefined when it can: it is pending and not paid. */
export function notPayableReason(order: Pick<StoreOrder, 'status' | 'date_paid'>): NotPayableReason | undefined {
  if (isPaid(order)) return 'Order is already paid';
  if (order.status !== ORDER_STATUS.pending) return 'Order status is not pending';
  return undefined;
}

/** The key's non-empty string values in order: webhooks append the intents paying the order, so the last is the newest. */
const valuesOf = (order: StoreOrder, key: string) =>
  order.meta_data.filter((m) => m.key === key && typeof m.value === 'string' && m.value !== '').map((m) => m.value as string);

export function paidIntentId(order: StoreOrder): string | undefined {
  return valuesOf(order, META.providerPaymentIntentId).at(-1);
}

export function checkoutIntentId(order: StoreOrder): string | undefined {
  return valuesOf(order, META.paymentIntentId)[0];
}

/**
 * A payment that is not the one on record (docs/integrations/stripe.md#a-second-payment-for-a-paid-order): `_payment_intent_id`
 * is no proof of payment, as checkout hands it out before anyone pays. Every recorded intent counts, and the `transaction_id` charge.
 */
export function duplicatePaymentOf(
  order: StoreOrder,
  payment: { intentId: string; chargeId: string },
): { paidIntentId: string | undefined } | undefined {
  const recorded = valuesOf(order, META.providerPaymentIntentId);
  if (recorded.includes(payment.intentId)) return undefined;
  if (payment.chargeId !== '' && order.transaction_id === payment.chargeId) return undefined;
  return { paidIntentId: recorded.at(-1) };
}

function paymentStateOf(order: StoreOrder): PaymentState {
  const stored = parsePaymentState(order.meta_data.find((m) => m.key === PAYMENT_STATE_META)?.value);
  if (stored !== undefined && stored !== 'unreadable') return stored;
  if (stored === 'unreadable') {
    // Never read as "nothing happened": rebuilt from what the order shows, and written back with the next change.
    log.warn('card.payment_state_repaired', { orderId: order.id, action: 'rebuilt from the order meta; check the order if it was edited by hand' });
  }
  return rebuildPaymentState({
    status: order.status,
    checkoutIntentId: metaValue(order, META.paymentIntentId),
    paidIntentId: paidIntentId(order),
    paidChargeId: metaValue(order, META.providerChargeId),
    authorizedAt: metaValue(order, META.paymentAuthorizedAt),
    processingAt: metaValue(order, META.paymentProcessingAt),
    failedAt: metaValue(order, META.paymentFailedAt),
    mismatchNote: order.customer_note === AMOUNT_MISMATCH_NOTE,
    reviewId: metaValue(order, META.reviewId),
    reviewClosedReason: metaValue(order, META.reviewClosedReason),
    disputeId: metaValue(order, META.disputeId),
    disputeStatus: metaValue(order, META.disputeStatus),
    statusBeforeHold: metaValue(order, META.statusBeforeDispute) ?? metaValue(order, META.statusBeforeReview),
    shipped: metaValue(order, META.shippedDate) !== undefined,
  });
}

/** Whether the facts on the order are readable (or absent): an order whose facts are garbled moves no money. */
export function paymentStateReadable(order: StoreOrder): boolean {
  return parsePaymentState(order.meta_data.find((m) => m.key === PAYMENT_STATE_META)?.value) !== 'unreadable';
}

export function currentPaymentState(order: StoreOrder): PaymentState {
  return observeShop(paymentStateOf(order), order.status);
}

export function awaitsCapturedPayment(order: StoreOrder): boolean {
  return holdsOf(currentPaymentState(order)).has('capture');
}

/** Whether nothing but its authorization holds the order: what shipping (on_shipment) may capture; with `alone` false,
 * whether it holds the order at all, held (on hold or `authorized`) and unpaid: what the expiry cron captures. */
export function heldForCapture(order: StoreOrder, alone = true): boolean {
  if (order.status !== ORDER_STATUS.onHold && order.status !== ORDER_STATUS.authorized) return false;
  if (!alone) return !isPaid(order) && awaitsCapturedPayment(order);
  const holds = holdsOf(currentPaymentState(order));
  return !isPaid(order) && holds.size === 1 && holds.has('capture');
}
