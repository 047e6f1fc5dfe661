/** Customer notes the service writes on orders, in one place so their wording is tested once. */

export function manualPaymentAwaitedNote(methodTitle: string): string {
  return `Your order has been submitted and is awaiting manual payment (${methodTitle}). Please send us a screenshot of your payment; we will confirm your order once the payment is verified.`;
}

export const AMOUNT_MISMATCH_NOTE =
  'We received your payment, but the amount paid does not match your order total, so your order has been placed on hold. Please contact support so we can resolve it.';

export function paymentFailedNote(errorMessage: string, cartRestored: boolean): string {
  const next = cartRestored
    ? 'Your cart has been restored so you can try again.'
    : 'Please try again or use another payment method.';
  // Provider messages usually end with their own full stop ("Your card was declined.").
  const reason = /[.!?]$/.test(errorMessage) ? errorMessage : `${errorMessage}.`;
  return `Your payment could not be completed: ${reason} ${next}`;
}

export interface ShipmentDetails {
  trackingNumber?: string | undefined;
  carrier?: string | undefined;
  shipDate?: string | undefined;
}

/** Spec 4.4: "Your order has been shipped!" then the present parts joined with " | ". */
export function shippedNote(details: ShipmentDetails): string {
  const parts = [
    details.trackingNumber ? `Tracking Number: ${details.trackingNumber}` : undefined,
    details.carrier ? `Carrier: ${details.carrier}` : undefined,
    details.shipDate ? `Ship Date: ${details.shipDate}` : undefined,
  ].filter((part): part is string => part !== undefined);
  return parts.length === 0 ? 'Your order has been shipped!' : `Your order has been shipped! ${parts.join(' | ')}`;
}
