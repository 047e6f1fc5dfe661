'use client';
/**
 * Stripe's Payment Element around the checkout client: the service creates
 * (or reuses) the order's payment intent, Stripe.js collects and confirms the
 * card, and the service learns the result from Stripe's webhook: the page
 * never reports a payment itself.
 */
import { Elements, PaymentElement, useElements, useStripe } from '@stripe/react-stripe-js';
import { loadStripe } from '@stripe/stripe-js';
import { type FormEvent, useEffect, useState } from 'react';
import { InvalidRequest, NotPayable, RateLimited, type Address, type ContactInfo } from '../../../../client/index';
import { checkout } from '../../lib/checkout-client';

// Loaded once, outside the component, so Stripe.js is not fetched again on every render.
const stripePromise = loadStripe(process.env.NEXT_PUBLIC_STRIPE_PUBLISHABLE_KEY ?? '');

interface Props {
  /** The order's checkout token, minted by the storefront's server. */
  token: string;
  billing: Address;
  contact: ContactInfo;
}

type State = { kind: 'loading' } | { kind: 'ready'; clientSecret: string } | { kind: 'failed'; message: string };

/** Turns the client's typed errors into what the customer should read. */
function messageFor(error: unknown): string {
  if (error instanceof NotPayable) {
    return error.reason === 'Order is already paid' ? 'This order is already paid.' : 'This order can no longer be paid.';
  }
  if (error instanceof RateLimited) {
    const at = error.resetAt?.toLocaleTimeString() ?? 'in a minute';
    return `Too many attempts. Please try again at ${at}.`;
  }
  if (error instanceof InvalidRequest) return `Please check: ${error.issues.map((issue) => issue.path.join('.')).join(', ')}`;
  return 'The payment could not be prepared. Please try again.';
}

export function PaymentForm({ token, billing, contact }: Props) {
  const [state, setState] = useState<State>({ kind: 'loading' });

  useEffect(() => {
    const controller = new AbortController();
    checkout
      .createPaymentIntent({ token, billing_address: billing, shipping_address: null, contact_info: contact }, { signal: controller.signal })
      .then((intent) => setState({ kind: 'ready', clientSecret: intent.client_secret }))
      .catch((error: unknown) => {
        if (!controller.signal.aborted) setState({ kind: 'failed', message: messageFor(error) });
      });
    return () => controller.abort();
  }, [token, billing, contact]);

  if (state.kind === 'loading') return <p>Preparing payment…</p>;
  if (state.kind === 'failed') return <p role="alert">{state.message}</p>;
  return (
    <Elements stripe={stripePromise} options={{ clientSecret: state.clientSecret }}>
      <ConfirmButton />
    </Elements>
  );
}

function ConfirmButton() {
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
      confirmParams: { return_url: `${window.location.origin}/checkout/complete` },
    });
    // Only reached when confirmation failed: on success Stripe redirects to return_url.
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
