/**
 * The customer's cart around a card payment (docs/decisions.md#d10), through the
 * companion plugin's routes. The cart is a convenience: when the plugin is
 * missing (404) or a call fails, the webhook still succeeds and a warning
 * names the failure (an identifier, never the store's answer).
 */
import { StoreError } from '@/lib/errors';
import { log } from '@/lib/log';
import type { Store } from '@/lib/store/types';

/** WordPress answers an unregistered route (the plugin is not active) with 404 `rest_no_route`. */
function failureOf(error: unknown): string {
  if (error instanceof StoreError) return error.code === 'rest_no_route' ? 'plugin_missing' : error.failure;
  return error instanceof Error ? error.name : 'unknown';
}

/** Empties a registered customer's cart once the order is paid; never throws. */
export async function clearCartAfterPayment(store: Store, customerId: number, orderId: number): Promise<boolean> {
  try {
    await store.clearCustomerCart(customerId);
    return true;
  } catch (error) {
    log.warn('card_webhook.cart_clear_failed', { orderId, failure: failureOf(error) });
    return false;
  }
}

/**
 * Puts the order's items back in a registered customer's cart after a failed payment; never throws.
 * Keyed by the failure event's id: the plugin restores once per key and customer (payment-failed.ts).
 */
export async function restoreCartAfterFailure(store: Store, customerId: number, orderId: number, eventId: string): Promise<boolean> {
  try {
    await store.restoreCustomerCart(customerId, orderId, eventId);
    return true;
  } catch (error) {
    log.warn('card_webhook.cart_restore_failed', { orderId, failure: failureOf(error) });
    return false;
  }
}
