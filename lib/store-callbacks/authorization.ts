/**
 * A card authorization held for an order (STRIPE_CAPTURE other than
 * `automatic`: the intent was created with manual capture), settled from the
 * WooCommerce admin through the companion plugin:
 *
 * - POST /api/store/capture: the "Capture charge" order action. Captures the
 *   order's total as the store holds it now: the whole authorization, or less
 *   when the order's total dropped (an item removed); never more than was
 *   authorized. The payment is then recorded by `payment_intent.succeeded`,
 *   as any payment is.
 * - POST /api/store/cancel-authorization: an order cancelled in the admin
 *   releases the customer's authorization at once instead of letting it lapse.
 *
 * Both act on the intent checkout handed out for the order, checked to be the
 * order's, and are idempotent by the order: a capture or cancellation already
 * done answers as done, and Stripe's idempotency key covers a retry whose
 * answer was lost.
 */
import type { PaymentIntentSummary } from '@/lib/card/stripe';
import { StoreCallbackRefusedError } from '@/lib/errors';
import { log, type RequestContext } from '@/lib/log';
import { formatMinorUnits } from '@/lib/money';
import { normalizeOrder } from '@/lib/orders/normalize';
import type { Services } from '@/lib/services';
import { checkoutIntentId, orderForCallback, orderIntent, refusedInPlainWords } from '@/lib/store-callbacks/card-payment';
import type { StoreOrderRequest } from '@/lib/store-callbacks/schemas';
import type { StoreOrder } from '@/lib/store/types';

export interface CaptureAnswer {
  /** The amount captured, a decimal string in the order's currency. */
  captured: string;
}

export interface CancelAuthorizationAnswer {
  /** Whether the order's authorization is released (now or before); false when there was none to release. */
  canceled: boolean;
}

const NOT_AUTHORIZED = 'The customer has not authorized a card payment for this order (yet).';

/** What to capture of an authorized intent: undefined for all of it, else the order's lower total. */
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

export interface CapturedAuthorization {
  outcome: 'captured' | 'already_captured';
  /** Minor units collected. */
  amount: number;
  intentId: string;
  authorized: number;
}

/**
 * Captures the order's authorization as the store holds the order now (the caller holds the order's
 * lock): the whole amount, or the order's lower total. An intent captured before answers what it
 * collected. Refusals (nothing authorized, cancelled or expired, a total above the authorization,
 * Stripe's own) throw StoreCallbackRefusedError in words for the shop owner; Stripe not answering
 * throws CardProviderError. `keyPrefix` names the caller in Stripe's idempotency key.
 */
export async function captureOrderAuthorization(order: StoreOrder, services: Services, keyPrefix: string): Promise<CapturedAuthorization> {
  const orderId = order.id;
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
  const card = await services.card();
  const captured = await refusedInPlainWords('capture', () =>
    card.capturePaymentIntent(intentId, amount, `${keyPrefix}-${orderId}-${intentId}-${amount ?? 'all'}`),
  );
  return { outcome: 'captured', amount: captured.amountReceived, intentId, authorized: intent.amountCapturable };
}

export async function captureFromStore(input: StoreOrderRequest, services: Services, context: RequestContext): Promise<CaptureAnswer> {
  const orderId = input.order_id;
  context.orderId = orderId;
  return services.orderLocks.withOrderLock(orderId, async () => {
    const order = await orderForCallback(orderId, services);
    const currency = normalizeOrder(order).currency;
    const result = await captureOrderAuthorization(order, services, 'store-capture');
    context.outcome = result.outcome;
    if (result.outcome === 'captured') {
      log.info('store_callback.captured', { orderId, intentId: result.intentId, amount: result.amount, authorized: result.authorized, currency });
    }
    return { captured: formatMinorUnits(result.amount, currency) };
  });
}

export async function cancelAuthorizationFromStore(
  input: StoreOrderRequest,
  services: Services,
  context: RequestContext,
): Promise<CancelAuthorizationAnswer> {
  const orderId = input.order_id;
  context.orderId = orderId;
  return services.orderLocks.withOrderLock(orderId, async () => {
    const order = await orderForCallback(orderId, services);
    const intentId = checkoutIntentId(order);
    if (intentId === undefined) {
      context.outcome = 'no_authorization';
      return { canceled: false };
    }
    const intent = await orderIntent(order, intentId, services);
    if (intent.status === 'canceled') {
      context.outcome = 'already_canceled';
      return { canceled: true };
    }
    if (intent.status === 'succeeded') {
      throw new StoreCallbackRefusedError('The payment was already captured: refund it instead of cancelling the authorization.');
    }
    // An intent still waiting for the customer is left alone: the order may be reopened and paid with it.
    if (intent.status !== 'requires_capture') {
      context.outcome = 'no_authorization';
      return { canceled: false };
    }
    const card = await services.card();
    await refusedInPlainWords('cancellation', () => card.cancelPaymentIntent(intentId, `store-cancel-${orderId}-${intentId}`));
    context.outcome = 'authorization_canceled';
    log.info('store_callback.authorization_canceled', { orderId, intentId, amount: intent.amountCapturable });
    return { canceled: true };
  });
}
