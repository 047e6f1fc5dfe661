'use client';
/**
 * The customer's address, then Stripe's Payment Element: the service writes the address to the order
 * (WooCommerce recalculates tax) and answers the intent for the new total; Stripe.js confirms and
 * redirects to the return page. The order is paid when Stripe's webhook reaches the service.
 */
import { InvalidRequest, NotPayable, RateLimited, ShopBusy, type Address } from '@checkout-service/storefront-client';
import { Elements, PaymentElement, useElements, useStripe } from '@stripe/react-stripe-js';
import { type FormEvent, useState } from 'react';
import { checkout } from '../../../lib/checkout-client';
import { stripePromise } from '../../../lib/stripe';

const ADDRESS_FIELDS = [
  ['first_name', 'First name'],
  ['last_name', 'Last name'],
  ['address_1', 'Address'],
  ['city', 'City'],
  ['state', 'State / province'],
  ['postcode', 'Postcode'],
  ['country', 'Country (2 letters)'],
  ['email', 'Email'],
] as const;

/** Turns the client's typed errors into what the customer should read. */
export function messageFor(error: unknown): string {
  if (error instanceof NotPayable) return error.reason === 'Order is already paid' ? 'This order is already paid.' : 'This order can no longer be paid.';
  if (error instanceof RateLimited) return `Too many attempts. Please try again at ${error.resetAt?.toLocaleTimeString() ?? 'in a minute'}.`;
  if (error instanceof ShopBusy) return error.message;
  if (error instanceof InvalidRequest) return `Please check: ${error.issues.map((issue) => issue.path.join('.')).join(', ')}`;
  return 'The payment could not be prepared. Please try again.';
}

export function PaymentForm({ token, orderId, registered }: { token: string; orderId: number; registered: boolean }) {
  const [secrets, setSecrets] = useState<{ clientSecret: string; customerSessionClientSecret?: string }>();
  const [message, setMessage] = useState<string>();
  const [busy, setBusy] = useState(false);

  async function continueToPayment(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const billing: Address = Object.fromEntries(ADDRESS_FIELDS.map(([name]) => [name, String(form.get(name) ?? '').trim()]));
    setBusy(true);
    setMessage(undefined);
    try {
      // Only when the customer asked: the service then saves the card to their Stripe Customer when the payment succeeds.
      const save = registered && form.get('save_payment_method') === 'on';
      const intent = await checkout.createPaymentIntent({ token, billing_address: billing, shipping_address: null, ...(save ? { save_payment_method: true } : {}) });
      // A returning customer's session: the Payment Element lists the cards saved before.
      setSecrets({ clientSecret: intent.client_secret, customerSessionClientSecret: intent.customer_session_client_secret });
    } catch (error) {
      setMessage(messageFor(error));
    } finally {
      setBusy(false);
    }
  }

  if (secrets) {
    return (
      <Elements stripe={stripePromise} options={secrets}>
        <ConfirmPayment orderId={orderId} />
      </Elements>
    );
  }
  return (
    <form onSubmit={continueToPayment}>
      {ADDRESS_FIELDS.map(([name, label]) => (
        <p key={name}>
          <label>
            {label} <input name={name} required={name !== 'state'} autoComplete="on" />
          </label>
        </p>
      ))}
      {registered && (
        <p>
          <label>
            <input type="checkbox" name="save_payment_method" /> Save this card for my next order
          </label>
        </p>
      )}
      <button type="submit" disabled={busy}>
        Continue to payment
      </button>
      {message && <p role="alert">{message}</p>}
    </form>
  );
}

function ConfirmPayment({ orderId }: { orderId: number }) {
  const stripe = useStripe();
  const elements = useElements();
  const [message, setMessage] = useState<string>();
  const [busy, setBusy] = useState(false);

  async function pay(event: FormEvent) {
    event.preventDefault();
    if (!stripe || !elements) return;
    setBusy(true);
    const { error } = await stripe.confirmPayment({
      elements,
      // Stripe adds payment_intent, payment_intent_client_secret and redirect_status to this address.
      confirmParams: { return_url: `${window.location.origin}/checkout/${orderId}/complete` },
    });
    // Only reached when confirmation failed: on success Stripe.js leaves for return_url.
    setMessage(error.message ?? 'The payment failed.');
    setBusy(false);
  }

  return (
    <form onSubmit={pay}>
      <PaymentElement />
      <button type="submit" disabled={!stripe || busy}>
        Pay
      </button>
      {message && <p role="alert">{message}</p>}
    </form>
  );
}
