// Capturing or releasing an order's card authorization from the admin (docs/decisions.md#d36,
// docs/contract.md#the-stores-calls-apistore); `payment_intent.succeeded` then records a capture as any payment.
import { cancelAtStripe, captureOrderAuthorization, withCallbackOrder } from '@/lib/card-payments/authorization';
import { StoreCallbackRefusedError } from '@/lib/errors';
import { log, type RequestContext } from '@/lib/log';
import { formatMinorUnits } from '@/lib/money';
import { normalizeOrder } from '@/lib/orders/normalize';
import type { Services } from '@/lib/services';
import { checkoutIntentId } from '@/lib/orders/order-payment';
import type { StoreOrderRequest } from '@/lib/store-callbacks/schemas';

export async function captureFromStore(
  { order_id: orderId }: StoreOrderRequest,
  services: Services,
  context: RequestContext,
): Promise<{ captured: string }> {
  return withCallbackOrder(orderId, services, context, async (order) => {
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
  { order_id: orderId }: StoreOrderRequest,
  services: Services,
  context: RequestContext,
): Promise<{ canceled: boolean }> {
  return withCallbackOrder(orderId, services, context, async (order) => {
    const intentId = checkoutIntentId(order);
    if (intentId === undefined) {
      context.outcome = 'no_authorization';
      return { canceled: false };
    }
    // A cancelled order cannot be paid: an attempt still open (3-D Secure, another tab) is cancelled too.
    const released = await cancelAtStripe(order, intentId, services, 'store-cancel');
    if (released.outcome === 'captured') {
      throw new StoreCallbackRefusedError('The payment was already captured: refund it instead of cancelling the authorization.');
    }
    context.outcome = released.outcome === 'released' ? 'authorization_canceled' : released.outcome === 'already_released' ? 'already_canceled' : 'processing';
    if (released.outcome === 'not_releasable') return { canceled: false };
    if (released.outcome === 'released') log.info('store_callback.authorization_canceled', { orderId, intentId, amount: released.held });
    return { canceled: true };
  });
}
