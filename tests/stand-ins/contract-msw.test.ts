/** The stand-in contract with WooCommerce and Stripe behind msw (in-process interception). */
import { beforeAll } from 'vitest';
import { TEST_STORE_URL, useTestEnv } from '../support/env';
import { useProviders } from '../support/providers';
import { defineContract } from './contract';

const providers = useProviders();

beforeAll(() => {
  useTestEnv();
  providers.reset({ customStatuses: ['shipped'], taxRates: { CA: 13 } });
});

defineContract('msw', {
  storeUrl: () => TEST_STORE_URL,
  stripeBaseUrl: () => undefined,
  woo: () => providers.woo,
  stripe: () => providers.stripe,
  useEnv: () => useTestEnv(),
});
