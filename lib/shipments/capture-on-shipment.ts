// STRIPE_CAPTURE=on_shipment: the held authorization captured under the shipment's lock before it ships (docs/decisions.md#d36).
import { captureOrderAuthorization } from '@/lib/card-payments/authorization';
import { CardProviderError, StoreCallbackRefusedError } from '@/lib/errors';
import { log } from '@/lib/log';
import type { Services } from '@/lib/services';
import type { StoreOrder } from '@/lib/store/types';

/** Undefined when captured (now or before), else the replay queue's reason. */
export async function captureBeforeShipping(orderId: number, order: StoreOrder, services: Services): Promise<string | undefined> {
  try {
    const captured = await captureOrderAuthorization(order, services, 'ship-capture');
    log.info('shipping.captured', { orderId, intentId: captured.intentId, amount: captured.amount, authorized: captured.authorized, outcome: captured.outcome });
    return undefined;
  } catch (error) {
    if (error instanceof StoreCallbackRefusedError) {
      const code = typeof error.details?.code === 'string' ? error.details.code : 'refused';
      // The shop must act (an expired authorization, a total above it): the reason is in words here.
      log.error('shipping.capture_refused', { orderId, code, reason: error.message });
      return `capture:${code}`;
    }
    if (error instanceof CardProviderError) {
      log.warn('shipping.capture_failed', { orderId, type: error.type, status: error.status });
      return `capture:${error.type}`;
    }
    throw error;
  }
}
