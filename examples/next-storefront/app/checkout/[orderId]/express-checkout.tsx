'use client';
/**
 * Stripe's Express Checkout Element (Apple Pay, Google Pay, Link): the sheet's rates are the shop's at the
 * wallet's address and its amount the order's total, both answered by the service; createPaymentIntent
 * with the wallet's details is the last word before stripe.confirmPayment (docs/storefront.md).
 */
import type { Address, ExpressShippingRate, SheetLineItem, WalletAddress } from '@checkout-service/storefront-client';
import { Elements, ExpressCheckoutElement, useElements, useStripe } from '@stripe/react-stripe-js';
import type {
  ExpressCheckoutAddress,
  ShippingRate,
  StripeExpressCheckoutElementClickEvent,
  StripeExpressCheckoutElementConfirmEvent,
  StripeExpressCheckoutElementShippingAddressChangeEvent,
  StripeExpressCheckoutElementShippingRateChangeEvent,
} from '@stripe/stripe-js';
import { useMemo, useRef, useState } from 'react';
import { checkout } from '../../../lib/checkout-client';
import { stripePromise } from '../../../lib/stripe';
import { messageFor } from './payment-form';

export interface ExpressCheckoutProps {
  token: string;
  orderId: number;
  /** The order's total in minor units, lower-case currency: the button's amount until the service answers one. */
  amount: number;
  currency: string;
  /** The order's shipping line as it is now: the wallet must be given a rate when it opens, before it reports an address. */
  currentRate: ShippingRate;
  lineItems: SheetLineItem[];
}

export function ExpressCheckout(props: ExpressCheckoutProps) {
  const options = useMemo(() => ({ mode: 'payment' as const, amount: props.amount, currency: props.currency }), [props.amount, props.currency]);
  return (
    <Elements stripe={stripePromise} options={options}>
      <Wallet {...props} />
    </Elements>
  );
}

const walletRate = (rate: ExpressShippingRate): ShippingRate => ({ id: rate.id, displayName: rate.label, amount: rate.amount });

/** The wallet's full address in the service's names; the name split at its first space. */
function addressOf(name: string, address: ExpressCheckoutAddress, contact: { email?: string; phone?: string } = {}): Address {
  const [first = '', ...rest] = name.trim().split(/\s+/);
  const fields: Address = {
    first_name: first,
    last_name: rest.join(' '),
    address_1: address.line1,
    address_2: address.line2 ?? '',
    city: address.city,
    state: address.state,
    postcode: address.postal_code,
    country: address.country,
    ...contact,
  };
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined && value !== '')) as Address;
}

function Wallet({ token, orderId, currentRate, lineItems }: ExpressCheckoutProps) {
  const stripe = useStripe();
  const elements = useElements();
  // The address the order's shipping line was priced at: a rate chosen later is priced there too.
  const address = useRef<WalletAddress>(undefined);
  const [message, setMessage] = useState<string>();

  // Stripe asks for an answer within a second: no call to the service here.
  function onClick(event: StripeExpressCheckoutElementClickEvent) {
    setMessage(undefined);
    event.resolve({ shippingRates: [currentRate], lineItems });
  }

  async function onShippingAddressChange(event: StripeExpressCheckoutElementShippingAddressChangeEvent) {
    const { country, state, postal_code, city } = event.address;
    const at: WalletAddress = { country, ...(state ? { state } : {}), ...(postal_code ? { postal_code } : {}), ...(city ? { city } : {}) };
    try {
      const { shipping_rates: rates } = await checkout.shippingRates({ token, address: at });
      // No method serves the address: the wallet tells the customer.
      if (!rates[0]) return event.reject();
      const chosen = await checkout.chooseShippingRate({ token, shipping_rate_id: rates[0].id, address: at });
      address.current = at;
      elements?.update({ amount: chosen.total });
      event.resolve({ shippingRates: rates.map(walletRate), lineItems: chosen.line_items });
    } catch (error) {
      setMessage(messageFor(error));
      event.reject();
    }
  }

  async function onShippingRateChange(event: StripeExpressCheckoutElementShippingRateChangeEvent) {
    if (!address.current) return event.reject();
    try {
      const chosen = await checkout.chooseShippingRate({ token, shipping_rate_id: event.shippingRate.id, address: address.current });
      elements?.update({ amount: chosen.total });
      event.resolve({ lineItems: chosen.line_items });
    } catch (error) {
      setMessage(messageFor(error));
      event.reject();
    }
  }

  async function onConfirm(event: StripeExpressCheckoutElementConfirmEvent) {
    if (!stripe || !elements) return event.paymentFailed({ reason: 'fail' });
    const { error: submitError } = await elements.submit();
    if (submitError) {
      setMessage(submitError.message);
      return event.paymentFailed({ reason: 'fail' });
    }
    const billing = event.billingDetails;
    const shipping = event.shippingAddress;
    try {
      const intent = await checkout.createPaymentIntent({
        token,
        billing_address: billing ? addressOf(billing.name, billing.address) : {},
        shipping_address: shipping ? addressOf(shipping.name, shipping.address) : null,
        contact_info: { ...(billing?.email ? { email: billing.email } : {}), ...(billing?.phone ? { phone: billing.phone } : {}) },
      });
      const { error } = await stripe.confirmPayment({
        elements,
        clientSecret: intent.client_secret,
        confirmParams: { return_url: `${window.location.origin}/checkout/${orderId}/complete` },
      });
      // Only reached when confirmation failed: on success Stripe.js leaves for return_url.
      setMessage(error.message ?? 'The payment failed.');
      event.paymentFailed({ reason: 'fail', ...(error.message ? { message: error.message } : {}) });
    } catch (error) {
      setMessage(messageFor(error));
      event.paymentFailed({ reason: 'fail' });
    }
  }

  return (
    <section aria-label="Express checkout">
      <ExpressCheckoutElement
        options={{ emailRequired: true, phoneNumberRequired: true, shippingAddressRequired: true, billingAddressRequired: true }}
        onClick={onClick}
        onShippingAddressChange={onShippingAddressChange}
        onShippingRateChange={onShippingRateChange}
        onConfirm={onConfirm}
      />
      {message && <p role="alert">{message}</p>}
    </section>
  );
}
