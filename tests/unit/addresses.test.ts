import { describe, expect, it } from 'vitest';
import { checkoutAddressChange } from '@/lib/checkout/addresses';

const billing = { first_name: 'Ada', city: 'London', email: 'old@example.com' };
const shipping = { first_name: 'Bob', city: 'Paris' };
const contact = { email: 'ada@example.com', phone: '+44 20 0000' };

describe('checkout address change (spec 4.1 step 10, 4.2)', () => {
  it('writes nothing when the request has no address or contact', () => {
    expect(checkoutAddressChange({}, { shippingFallsBackToBilling: false })).toBeUndefined();
  });

  it('adds contact email and phone to the billing address', () => {
    expect(checkoutAddressChange({ billing_address: billing, contact_info: contact }, { shippingFallsBackToBilling: false })).toEqual({
      billing: { first_name: 'Ada', city: 'London', email: 'ada@example.com', phone: '+44 20 0000' },
    });
  });

  it('sets billing to only email and phone when there is contact info but no billing address', () => {
    expect(checkoutAddressChange({ contact_info: contact }, { shippingFallsBackToBilling: false })).toEqual({
      billing: { email: 'ada@example.com', phone: '+44 20 0000' },
    });
  });

  it('copies billing to shipping only when shipping_address is explicitly null (payment-intent)', () => {
    expect(checkoutAddressChange({ billing_address: billing, shipping_address: null }, { shippingFallsBackToBilling: false })?.shipping).toEqual(billing);
    expect(checkoutAddressChange({ billing_address: billing }, { shippingFallsBackToBilling: false })?.shipping).toBeUndefined();
    expect(checkoutAddressChange({ billing_address: billing, shipping_address: shipping }, { shippingFallsBackToBilling: false })?.shipping).toEqual(shipping);
  });

  it('ships to billing whenever no shipping address is given (submit-order)', () => {
    expect(checkoutAddressChange({ billing_address: billing }, { shippingFallsBackToBilling: true })?.shipping).toEqual(billing);
    expect(checkoutAddressChange({ billing_address: billing, shipping_address: null }, { shippingFallsBackToBilling: true })?.shipping).toEqual(billing);
    expect(checkoutAddressChange({ billing_address: billing, shipping_address: shipping }, { shippingFallsBackToBilling: true })?.shipping).toEqual(shipping);
  });
});
