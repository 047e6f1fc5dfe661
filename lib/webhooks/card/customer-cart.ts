// The customer's cart around a payment, through Checkout Bridge (docs/decisions.md#d10): never throws, a warning names the failure.
import { StoreError } from '@/lib/errors';
import { log } from '@/lib/log';
import type { Store } from '@/lib/store/types';

/** WordPress answers an unregistered route (the plugin is not active) with 404 `rest_no_route`. */
function failureOf(error: unknown): string {
  if (error instanceof StoreError) return error.code === 'rest_no_route' ? 'plugin_missing' : error.failure;
  return error instanceof Error ? error.name : 'unknown';
}

export async function clearCartAfterPayment(store: Store, customerId: number, orderId: number): Promise<boolean> {
  try {
    await store.clearCustomerCart(customerId);
    return true;
  } catch (error) {
    log.warn('card_webhook.cart_clear_failed', { orderId, failure: failureOf(error) });
    return false;
  }
}

/** Keyed by the failure event: the plugin restores once per key and customer (docs/decisions.md#d28). */
export async function restoreCartAfterFailure(store: Store, customerId: number, orderId: number, eventId: string): Promise<boolean> {
  try {
    await store.restoreCustomerCart(customerId, orderId, eventId);
    return true;
  } catch (error) {
    log.warn('card_webhook.cart_restore_failed', { orderId, failure: failureOf(error) });
    return false;
  }
}
