// What every caller that moves an order's money at Stripe shares: the order's own intent, Stripe's refusals in words.
import type { PaymentIntentSummary } from '@/lib/card/stripe';
import { CardProviderError, StoreCallbackRefusedError } from '@/lib/errors';
import type { Services } from '@/lib/services';
import type { StoreOrder } from '@/lib/store/types';

/** Only this order's intent (docs/decisions.md#d13); a refusal otherwise. */
export async function orderIntent(order: StoreOrder, intentId: string, services: Services): Promise<PaymentIntentSummary> {
  const intent = await (await services.card()).retrievePaymentIntent(intentId);
  if (!intent || intent.orderId !== String(order.id) || intent.currency !== order.currency.toLowerCase()) {
    throw new StoreCallbackRefusedError(`The card payment of order #${order.id} was not found at Stripe.`);
  }
  return intent;
}

/** Stripe answered and said no (as opposed to not answering, which is retried and answered 502). */
function isRefusal(error: unknown): error is CardProviderError {
  return error instanceof CardProviderError && error.status !== undefined && [400, 402, 404].includes(error.status);
}

export const PLAIN_WORDS: Record<string, string> = {
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
    if (!isRefusal(error)) throw error;
    const words = (error.code && PLAIN_WORDS[error.code]) ?? `Stripe refused the ${what} (${error.code ?? error.type}).`;
    throw new StoreCallbackRefusedError(words, { code: error.code ?? error.type });
  }
}
