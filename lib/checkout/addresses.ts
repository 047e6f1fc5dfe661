/** Which addresses a checkout request writes (docs/contract.md#spec-4-1 step 10, docs/contract.md#spec-4-2). */
import type { PaymentIntentRequest } from '@/lib/checkout/schemas';
import type { OrderChange } from '@/lib/orders/mutation';

/** `shippingFallsBackToBilling`: submit-order's rule; payment-intent ships to billing only for an explicit null. */
export function checkoutAddressChange(
  input: Pick<PaymentIntentRequest, 'billing_address' | 'shipping_address' | 'contact_info'>,
  options: { shippingFallsBackToBilling: boolean },
): Pick<OrderChange, 'billing' | 'shipping'> | undefined {
  const { billing_address: billingAddress, shipping_address: shippingAddress, contact_info: contact } = input;
  if (billingAddress === undefined && shippingAddress === undefined && contact === undefined) return undefined;

  const change: Pick<OrderChange, 'billing' | 'shipping'> = {};
  // The schema leaves a key out rather than undefined, so contact's fields override only when given.
  if (billingAddress !== undefined || contact !== undefined) change.billing = { ...billingAddress, ...contact };

  const shipping = shippingAddress ?? (shippingAddress === null || options.shippingFallsBackToBilling ? billingAddress : undefined);
  if (shipping !== undefined) change.shipping = { ...shipping };
  return change;
}
