/** Which addresses a checkout request writes (docs/contract.md#spec-4-1 step 10, docs/contract.md#spec-4-2). */
import type { CheckoutAddress, ContactInfo } from '@/lib/checkout/schemas';
import type { OrderAddress } from '@/lib/store/types';

export interface CheckoutAddressInput {
  billing_address?: CheckoutAddress | undefined;
  shipping_address?: CheckoutAddress | null | undefined;
  contact_info?: ContactInfo | undefined;
}

export interface AddressChange {
  billing?: OrderAddress;
  shipping?: OrderAddress;
}

function contactFields(contact: ContactInfo): OrderAddress {
  const fields: OrderAddress = {};
  if (contact.email !== undefined) fields.email = contact.email;
  if (contact.phone !== undefined) fields.phone = contact.phone;
  return fields;
}

/** `shippingFallsBackToBilling`: submit-order's rule; payment-intent ships to billing only for an explicit null. */
export function checkoutAddressChange(
  input: CheckoutAddressInput,
  options: { shippingFallsBackToBilling: boolean },
): AddressChange | undefined {
  const { billing_address: billingAddress, shipping_address: shippingAddress, contact_info: contact } = input;
  if (billingAddress === undefined && shippingAddress === undefined && contact === undefined) return undefined;

  const change: AddressChange = {};
  if (billingAddress !== undefined) {
    change.billing = { ...billingAddress, ...(contact ? contactFields(contact) : {}) };
  } else if (contact !== undefined) {
    change.billing = contactFields(contact);
  }

  if (shippingAddress) {
    change.shipping = { ...shippingAddress };
  } else if (billingAddress !== undefined && (shippingAddress === null || options.shippingFallsBackToBilling)) {
    change.shipping = { ...billingAddress };
  }
  return change;
}
