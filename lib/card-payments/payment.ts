// The payment intent's events (docs/contract.md#spec-4-3, docs/contract.md#payment-life): each a transition of the
// payment model. The customer's cart goes through Checkout Bridge (docs/decisions.md#d10): a failure there is a warning.
import type { CardEventOf } from '@/lib/card/events';
import { paymentMethodTitle } from '@/lib/card/payment-methods';
import { releaseAuthorization } from '@/lib/card-payments/authorization';
import { InvalidCardEventError, StoreError } from '@/lib/errors';
import { log } from '@/lib/log';
import { formatMinorUnits } from '@/lib/money';
import { META } from '@/lib/orders/meta-keys';
import { metaValue, normalizeOrder } from '@/lib/orders/normalize';
import {
  AMOUNT_MISMATCH_NOTE,
  isSupersededByPayment,
  PAYMENT_PROCESSING_NOTE,
  PAYMENT_RECEIVED_NOTE,
  paymentAuthorizedNote,
  paymentFailedNote,
  shopNotes,
} from '@/lib/orders/notes';
import { checkoutIntentId, currentPaymentState, duplicatePaymentOf, isPaid } from '@/lib/orders/order-payment';
import { applyFact, paymentsOf } from '@/lib/orders/payment-state';
import { CLOSED_STATUSES, HOLD_STATUSES, ORDER_STATUS } from '@/lib/order-statuses';
import type { Services } from '@/lib/services';
import type { StoreOrder } from '@/lib/store/types';
import { applyTransition, changed, DUPLICATE_EVENT, unchanged, type CardOutcome } from '@/lib/card-payments/transition';

type IntentEvent = CardEventOf<'payment_intent'>;

/** WordPress answers an unregistered route (the plugin is not active) with 404 `rest_no_route`. */
async function cartCall(what: 'clear' | 'restore', orderId: number, call: () => Promise<unknown>): Promise<boolean> {
  try {
    await call();
    return true;
  } catch (error) {
    const storeFailure = error instanceof StoreError && (error.code === 'rest_no_route' ? 'plugin_missing' : error.failure);
    const failure = storeFailure || (error instanceof Error ? error.name : 'unknown');
    log.warn(`card_webhook.cart_${what}_failed`, { orderId, failure });
    return false;
  }
}

/** payment_intent.succeeded; superseded state as docs/decisions.md#d13 says. The cart is cleared only by the delivery that recorded it. */
export async function paymentSucceeded(orderId: number, event: IntentEvent, services: Services): Promise<CardOutcome> {
  const { intent } = event;
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
    // A second payment for a paid order: logged for the shop to refund.
    const duplicate = duplicatePaymentOf(order, intent);
    if (duplicate === undefined) return unchanged('already_paid');
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
  const { currency } = normalized;
  const rounded = normalized.charge_cents !== normalized.total_cents;
  const paid = await applyTransition(order, fact, services, (transition) => ({
    // A three-decimal total Stripe charged in multiples of 10: the shop sees why the two differ.
    ...(rounded
      ? { shopNote: shopNotes.chargeRounded(formatMinorUnits(paidAmount, currency), formatMinorUnits(normalized.total_cents, currency), currency) }
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

  if (order.customer_id > 0) await cartCall('clear', orderId, () => store.clearCustomerCart(order.customer_id));
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

/** A newer attempt is under way or done: the failure event is history. */
const MOVED_ON: ReadonlySet<string> = new Set(['processing', 'requires_capture', 'succeeded']);

/** payment_intent.payment_failed: the cart is restored before the write, so the one write can say whether it came back (d28). */
export async function paymentFailed(orderId: number, event: IntentEvent, services: Services): Promise<CardOutcome> {
  const { intent } = event;
  const store = services.store();
  const order = await store.getOrder(orderId);
  const state = currentPaymentState(order);
  // A debit the facts hold as on its way: its failure is recorded whatever status the order has now.
  const debitOnItsWay = state.attempt?.kind === 'processing' && state.attempt.intentId === intent.intentId && !state.paid;
  if (order.status !== ORDER_STATUS.pending && !debitOnItsWay) return unchanged('not_pending');
  const fact = { kind: 'failed' as const, at: event.created, intentId: intent.intentId, chargeId: intent.chargeId, eventId: event.id };
  const preview = applyFact(state, fact).outcome;
  if (preview === 'duplicate') return unchanged(DUPLICATE_EVENT);
  if (preview === 'stale') return unchanged('stale_failure');
  if (debitOnItsWay) {
    // The event's snapshot may be older than the debit the order holds. Stripe's intent says now.
    const current = await (await services.card()).retrievePaymentIntent(intent.intentId);
    if (current && MOVED_ON.has(current.status)) return unchanged('stale_failure');
  }
  // The shop moved the order on while the debit was on its way: it must know the order is not paid.
  const movedOn = order.status !== ORDER_STATUS.pending && !HOLD_STATUSES.has(order.status);
  // Keyed by the failure event: the plugin restores once per key and customer (docs/decisions.md#d28).
  const restored =
    order.customer_id > 0 && (await cartCall('restore', orderId, () => store.restoreCustomerCart(order.customer_id, orderId, event.id)));
  const recorded = await applyTransition(order, fact, services, () => ({
    shopNote: movedOn ? shopNotes.debitFailed(intent.intentId, order.status) : undefined,
    customerNote: paymentFailedNote(intent.errorMessage, restored),
    meta: {
      [META.paymentFailedAt]: new Date().toISOString(),
      [META.paymentError]: intent.errorMessage,
      [META.cartRestoredOnFailure]: restored ? 'yes' : 'no',
    },
    metaMode: 'append',
  }));
  return recorded.outcome === 'applied' ? changed('payment_failure_recorded') : unchanged(DUPLICATE_EVENT);
}

/** payment_intent.processing: a delayed debit holds a pending order. */
export async function paymentProcessing(orderId: number, event: IntentEvent, services: Services): Promise<CardOutcome> {
  const order = await services.store().getOrder(orderId);
  // Pending, or held by the model already (a review may come first): the debit's hold joins the others.
  if ((order.status !== ORDER_STATUS.pending && !HOLD_STATUSES.has(order.status)) || isPaid(order)) return unchanged('not_pending');
  const held = await applyTransition(
    order,
    { kind: 'processing', at: event.created, intentId: event.intent.intentId, chargeId: event.intent.chargeId },
    services,
    () => ({ customerNote: PAYMENT_PROCESSING_NOTE, meta: { [META.paymentProcessingAt]: new Date().toISOString() }, metaMode: 'append' }),
  );
  if (held.outcome === 'duplicate') return unchanged(DUPLICATE_EVENT);
  return held.outcome === 'applied' ? changed('payment_processing_on_hold') : unchanged('not_pending');
}

/** Undefined when Stripe cannot say now: the expiry cron reads it anyway. */
async function captureBeforeOf(chargeId: string, services: Services): Promise<number | undefined> {
  if (!chargeId) return undefined;
  try {
    return (await (await services.card()).retrieveCharge(chargeId))?.captureBefore;
  } catch (error) {
    log.warn('card.capture_before_unread', { chargeId, reason: error instanceof Error ? error.name : 'unknown' });
    return undefined;
  }
}

/** payment_intent.amount_capturable_updated (d36): the authorization is a hold with its `capture_before`. */
export async function paymentAuthorized(orderId: number, event: IntentEvent, services: Services): Promise<CardOutcome> {
  const { intent } = event;
  const order = await services.store().getOrder(orderId);
  const fact = { kind: 'authorized' as const, at: event.created, intentId: intent.intentId, chargeId: intent.chargeId };
  const state = currentPaymentState(order);
  if (state.paid || isPaid(order)) return unchanged('already_paid');
  // An order that can no longer be paid holds no money: released at once.
  if (CLOSED_STATUSES.has(order.status)) {
    const released = { ...fact, released: true };
    if (applyFact(state, released).outcome !== 'applied') return unchanged(DUPLICATE_EVENT);
    await releaseAuthorization(order, intent.intentId, services, `authorized after the order was ${order.status}`);
    await applyTransition(order, released, services);
    return changed('released_unpayable_order');
  }
  if (applyFact(state, fact).outcome !== 'applied') return unchanged(DUPLICATE_EVENT);
  const captureBefore = await captureBeforeOf(intent.chargeId, services);
  const recorded = await applyTransition(order, { ...fact, captureBefore }, services, () => ({
    customerNote: paymentAuthorizedNote(services.config.capture),
    meta: { [META.paymentAuthorizedAt]: new Date().toISOString() },
    metaMode: 'append',
  }));
  return recorded.outcome === 'applied' ? changed('authorized_on_hold') : unchanged(DUPLICATE_EVENT);
}

/** Stripe's own cancels ("generated by Stripe internally"): a lapse; the rest are asked for. */
const STRIPE_OWN_REASONS: ReadonlySet<string> = new Set(['automatic', 'expired']);
const PAY_AGAIN = 'Ask the customer to pay again (set the order back to pending) or cancel the order.';

/** payment_intent.canceled: the authorization released, its hold ended; an order held only for it becomes `failed`. */
export async function paymentCanceled(orderId: number, event: IntentEvent, services: Services): Promise<CardOutcome> {
  const order = await services.store().getOrder(orderId);
  const intentId = event.intent.intentId;
  const state = currentPaymentState(order);
  if (!paymentsOf(state, checkoutIntentId(order)).has(intentId)) return unchanged('other_intent');
  const reason = event.intent.cancellationReason ?? 'other';
  const lapsed = STRIPE_OWN_REASONS.has(reason);
  const fact = { kind: 'canceled' as const, at: event.created, intentId, lapsed };
  const applied = applyFact(state, fact);
  if (applied.outcome === 'duplicate') return unchanged(DUPLICATE_EVENT);
  if (applied.outcome === 'stale') return unchanged('already_paid');
  // Recorded whatever the order shows, so an authorization delivered after it finds it released.
  const releasedNow = state.authorization?.intentId === intentId && !state.authorization.released;
  // Released because the order was cancelled: nothing to tell.
  const tell = releasedNow && order.status !== ORDER_STATUS.cancelled;
  const what = lapsed ? 'lapsed at Stripe before it was captured' : `was cancelled at Stripe (reason: ${reason})`;
  const recorded = await applyTransition(order, fact, services, () => ({
    shopNote: tell
      ? `The card authorization ${intentId} ${what}: the customer was not charged and can no longer be. ${PAY_AGAIN}`
      : undefined,
    // Written empty (read as absent): the order no longer holds an authorization to capture.
    ...(releasedNow ? { metaValues: { [META.paymentAuthorizedAt]: '' } } : {}),
  }));
  if (recorded.outcome !== 'applied') return unchanged(DUPLICATE_EVENT);
  if (!releasedNow) return changed('cancel_recorded');
  if (recorded.status !== ORDER_STATUS.failed) return changed('cancel_noted');
  return changed(lapsed ? 'authorization_lapsed' : 'authorization_canceled');
}
