/**
 * The stand-in contract against the local HTTP stand-ins on loopback: the
 * store client signs with OAuth 1.0a (http://), the Stripe SDK talks to the
 * stand-in through STRIPE_API_BASE_URL. No msw here: every byte crosses a socket.
 */
import { afterAll, beforeAll } from 'vitest';
import { StripeModel } from '@/stand-ins/stripe/model';
import { startStripeStandIn, type StripeStandIn } from '@/stand-ins/stripe/loopback-server';
import { WooCommerceModel } from '@/stand-ins/woocommerce/model';
import { startWooCommerceStandIn, type WooStandIn } from '@/stand-ins/woocommerce/loopback-server';
import { TEST_CONSUMER_KEY, TEST_CONSUMER_SECRET, TEST_STRIPE_KEY, useTestEnv } from '../support/env';
import { defineContract } from './contract';

let woo: WooStandIn;
let stripe: StripeStandIn;

beforeAll(async () => {
  woo = await startWooCommerceStandIn({
    model: new WooCommerceModel({ customStatuses: ['shipped'], taxRates: { CA: 13 } }),
    credentials: { consumerKey: TEST_CONSUMER_KEY, consumerSecret: TEST_CONSUMER_SECRET },
  });
  stripe = await startStripeStandIn({ model: new StripeModel(), secretKey: TEST_STRIPE_KEY });
});

afterAll(async () => {
  await Promise.all([woo?.close(), stripe?.close()]);
});

defineContract('HTTP stand-ins', {
  storeUrl: () => woo.url,
  stripeBaseUrl: () => stripe.url,
  woo: () => woo.model,
  stripe: () => stripe.model,
  useEnv: () => useTestEnv({ WOOCOMMERCE_URL: woo.url, STRIPE_API_BASE_URL: stripe.url }),
});
