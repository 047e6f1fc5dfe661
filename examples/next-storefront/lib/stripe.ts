import { loadStripe } from '@stripe/stripe-js';

// Loaded once for the whole app, so Stripe.js is not fetched again on every render.
export const stripePromise = loadStripe(process.env.NEXT_PUBLIC_STRIPE_PUBLISHABLE_KEY ?? '');
