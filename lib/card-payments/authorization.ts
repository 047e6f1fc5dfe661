// Moving an order's money at Stripe, for the admin, the shipment and the cron alike: the order's own intent, capturing or
// releasing its authorization (docs/decisions.md#d36), Stripe's refusals in words.
import type { PaymentIntentSummary } from '@/lib/card/stripe';
import { CardProviderError, StoreCallbackRefusedError, StoreError } from '@/lib/errors';
import { log, type RequestContext } from '@/lib/log';
import { formatMinorUnits } from '@/lib/money';
import { normalizeOrder } from '@/lib/orders/normalize';
import { checkoutIntentId, currentPaymentState, paymentStateReadable } from '@/lib/orders/order-payment';
import { holdsOf } from '@/lib/orders/payment-state';
import type { Services } from '@/lib/services';
import { CLOSED_STATUSES } from '@/lib/order-statuses';
import type { StoreOrder } from '@/lib/store/types';
import { addShopNoteOnce } from '@/lib/orders/shop-note';

/** Under the order's lock, the order the store's call names (docs/decisions.md#d22), refused in words when the store does not have it. */
export function withCallbackOrder<T>(
  orderId: number,
  services: Services,
  context: RequestContext,
  task: (order: StoreOrder) => Promise<T>,
): Promise<T> {
  context.orderId = orderId;
  return services.orderLocks.withOrderLock(orderId, async () => {
    const order = await services.store().getOrder(orderId).catch((error: unknown) => {
      if (!(error instanceof StoreError) || error.failure !== 'not_found') throw error;
      throw new StoreCallbackRefusedError(`Order #${orderId} was not found in the store.`);
    });
    return task(order);
  });
}

/** Only this order's intent (docs/decisions.md#d13); a refusal otherwise. */
export async function orderIntent(order: StoreOrder, intentId: string, services: Services): Promise<PaymentIntentSummary> {
  const intent = await (await services.card()).retrievePaymentIntent(intentId);
  if (!intent || intent.orderId !== String(order.id) || intent.currency !== order.currency.toLowerCase()) {
    throw new StoreCallbackRefusedError(`The card payment of order #${order.id} was not found at Stripe.`);
  }
  return intent;
}

const PLAIN_WORDS: Record<string, string> = {
  charge_already_refunded: 'Stripe has already refunded this payment in full.',
  amount_too_large: 'The amount is more than what remains of this payment at Stripe.',
  amount_too_small: 'The amount is below the smallest amount Stripe can move in this currency.',
  charge_disputed:
    'The customer disputed this payment with their bank (a chargeback), so Stripe will not refund it: respond to the dispute in the Stripe Dashboard instead.',
  charge_not_refundable: 'Stripe cannot refund this payment.',
  charge_expired_for_capture: 'The authorization has expired (card authorizations last 7 days): the payment can no longer be captured.',
  charge_already_captured: 'The payment was already captured.',
  payment_intent_unexpected_state: 'The payment is no longer in a state that allows this at Stripe.',
};

export async function refusedInPlainWords<T>(what: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    // Stripe answered and said no (as opposed to not answering, which is retried and answered 502).
    if (!(error instanceof CardProviderError) || error.status === undefined || ![400, 402, 404].includes(error.status)) throw error;
    const words = (error.code && PLAIN_WORDS[error.code]) ?? `Stripe refused the ${what} (${error.code ?? error.type}).`;
    throw new StoreCallbackRefusedError(words, { code: error.code ?? error.type });
  }
}

const NOT_AUTHORIZED = 'The customer has not authorized a card payment for this order (yet).';

/** Undefined captures all of it; an order's lower total (an item removed) captures less. */
function amountToCapture(intent: PaymentIntentSummary, orderTotal: number, currency: string): number | undefined {
  if (orderTotal <= 0) throw new StoreCallbackRefusedError('The order total is zero: cancel the order to release the authorization.');
  if (orderTotal > intent.amountCapturable) {
    throw new StoreCallbackRefusedError(
      `The order total (${formatMinorUnits(orderTotal, currency)} ${currency}) is more than the customer authorized ` +
        `(${formatMinorUnits(intent.amountCapturable, currency)} ${currency}): a card authorization cannot be raised.`,
    );
  }
  return orderTotal < intent.amountCapturable ? orderTotal : undefined;
}

/** Read from Stripe when the money would move: an event or the order's meta may be behind. */
async function checkChargeAtStripe(intent: PaymentIntentSummary, services: Services, nowSeconds: number): Promise<void> {
  const charge = intent.chargeId ? await (await services.card()).retrieveCharge(intent.chargeId) : undefined;
  if (!charge || charge.intentId !== intent.id) throw new StoreCallbackRefusedError(NOT_AUTHORIZED);
  if (charge.reviewOpen) {
    throw new StoreCallbackRefusedError(
      `Stripe Radar is reviewing this payment (${charge.reviewId}): approve it in the Stripe Dashboard before capturing, or refund it.`,
      { code: 'review_open' },
    );
  }
  if (charge.captureBefore !== undefined && nowSeconds >= charge.captureBefore) {
    throw new StoreCallbackRefusedError(PLAIN_WORDS.charge_expired_for_capture!, { code: 'charge_expired_for_capture' });
  }
}

/** The caller holds the order's lock; `keyPrefix` names the caller in Stripe's idempotency key. */
export async function captureOrderAuthorization(
  order: StoreOrder,
  services: Services,
  keyPrefix: string,
  now: () => number = Date.now,
): Promise<{ outcome: 'captured' | 'already_captured'; amount: number; intentId: string; authorized: number }> {
  const orderId = order.id;
  if (CLOSED_STATUSES.has(order.status)) {
    throw new StoreCallbackRefusedError(`The order is ${order.status}: its payment is not captured.`, { code: `order_${order.status}` });
  }
  if (!paymentStateReadable(order)) {
    throw new StoreCallbackRefusedError('The order\'s payment record (_cardprovider_payment) cannot be read: nothing is captured until it is repaired.', {
      code: 'order_state_unreadable',
    });
  }
  // The order's own facts must agree too: a review, a mismatch or a debit it holds is not Stripe's to overrule.
  const otherHolds = [...holdsOf(currentPaymentState(order))].filter((hold) => hold !== 'capture');
  if (otherHolds.length > 0) {
    throw new StoreCallbackRefusedError(`The order is on hold (${otherHolds.join(', ')}): its payment is not captured until that is settled.`, {
      code: 'order_held',
    });
  }
  const intentId = checkoutIntentId(order);
  if (intentId === undefined) throw new StoreCallbackRefusedError(NOT_AUTHORIZED);
  const intent = await orderIntent(order, intentId, services);
  const currency = normalizeOrder(order).currency;
  if (intent.status === 'succeeded') return { outcome: 'already_captured', amount: intent.amountReceived, intentId, authorized: intent.amount };
  if (intent.status === 'canceled') {
    throw new StoreCallbackRefusedError('The authorization was cancelled or has expired: there is nothing left to capture.');
  }
  if (intent.status !== 'requires_capture') throw new StoreCallbackRefusedError(NOT_AUTHORIZED);

  const amount = amountToCapture(intent, normalizeOrder(order).charge_cents, currency);
  await checkChargeAtStripe(intent, services, Math.floor(now() / 1000));
  const card = await services.card();
  const captured = await refusedInPlainWords('capture', () =>
    card.capturePaymentIntent(intentId, amount, `${keyPrefix}-${orderId}-${intentId}-${amount ?? 'all'}`),
  );
  return { outcome: 'captured', amount: captured.amountReceived, intentId, authorized: intent.amountCapturable };
}

/** An authorization, or an attempt that could still become one. */
const RELEASABLE_STATUSES: ReadonlySet<string> = new Set(['requires_capture', 'requires_payment_method', 'requires_confirmation', 'requires_action']);

/** `not_releasable`: the intent is processing. */
type ReleasedAuthorization = { outcome: 'released' | 'already_released' | 'captured' | 'not_releasable'; held: number };

export async function cancelAtStripe(order: StoreOrder, intentId: string, services: Services, keyPrefix: string): Promise<ReleasedAuthorization> {
  const intent = await orderIntent(order, intentId, services);
  if (intent.status === 'canceled') return { outcome: 'already_released', held: 0 };
  if (intent.status === 'succeeded') return { outcome: 'captured', held: 0 };
  if (!RELEASABLE_STATUSES.has(intent.status)) return { outcome: 'not_releasable', held: 0 };
  const card = await services.card();
  try {
    await card.cancelPaymentIntent(intentId, `${keyPrefix}-${order.id}-${intentId}`);
  } catch (error) {
    // The customer finished paying between the read and the cancel: say what the intent is now.
    if (!(error instanceof CardProviderError) || error.code !== 'payment_intent_unexpected_state') throw error;
    const now = await orderIntent(order, intentId, services);
    return { outcome: now.status === 'canceled' ? 'already_released' : now.status === 'succeeded' ? 'captured' : 'not_releasable', held: 0 };
  }
  return { outcome: 'released', held: intent.amountCapturable };
}

export async function releaseAuthorization(order: StoreOrder, intentId: string, services: Services, why: string): Promise<void> {
  const released = await cancelAtStripe(order, intentId, services, 'release');
  // Noted only when the service releases on its own: a release asked from the admin is noted by the plugin.
  if (released.outcome === 'released' || released.outcome === 'already_released') {
    const note = `The card payment ${intentId} was released at Stripe (${why}): the order is cancelled, so the customer is not charged.`;
    await addShopNoteOnce(services.store(), order.id, note);
  }
  log[released.outcome === 'captured' ? 'error' : 'info']('authorization.released', { orderId: order.id, intentId, outcome: released.outcome, held: released.held, why });
}
