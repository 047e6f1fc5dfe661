import { beforeEach, describe, expect, it } from 'vitest';
import { StripeCardProvider } from '@/lib/card/stripe';
import { TEST_STRIPE_KEY, useTestEnv } from '../support/env';
import { useProviders } from '../support/providers';

const providers = useProviders();
const stripeAt = () => new StripeCardProvider({ secretKey: TEST_STRIPE_KEY, webhookSecrets: [], apiBaseUrl: undefined }, 2000);

beforeEach(() => {
  useTestEnv();
  providers.reset();
});

describe('Stripe stand-in: customers and customer sessions, as the SDK reads them', () => {
  it('answers a deleted customer as deleted and an unknown one as resource_missing', async () => {
    const card = stripeAt();
    const kept = providers.stripe.customers.seed();
    const gone = providers.stripe.customers.seed();
    providers.stripe.customers.delete(gone.id);

    expect(await card.customers.retrieveCustomer(kept.id)).toBe(kept.id);
    expect(await card.customers.retrieveCustomer(gone.id)).toBeUndefined();
    expect(await card.customers.retrieveCustomer('cus_unknown')).toBeUndefined();
  });

  it('replays a customer create under its idempotency key', async () => {
    const card = stripeAt();
    const input = { wooCustomerId: 7, email: 'ada@example.com', name: 'Ada', idempotencyKey: 'k-1' };
    const first = await card.customers.createCustomer(input);
    expect(await card.customers.createCustomer(input)).toBe(first);
    expect(providers.stripe.customers.customers.size).toBe(1);
  });

  it('refuses a session for a deleted customer, and a feature value Stripe does not know', async () => {
    const card = stripeAt();
    const gone = providers.stripe.customers.seed();
    providers.stripe.customers.delete(gone.id);
    await expect(card.customers.createCustomerSession(gone.id)).rejects.toMatchObject({ code: 'resource_missing' });

    const kept = providers.stripe.customers.seed();
    expect(() =>
      providers.stripe.customers.createSession({ customer: kept.id, components: { payment_element: { enabled: 'true', features: { payment_method_save: 'sometimes' } } } }),
    ).toThrow(/payment_method_save/);
    expect(() => providers.stripe.customers.createSession({ customer: kept.id, components: {} })).toThrow(/component/);
  });

  it('refuses an intent for an unknown customer, and unsetting setup_future_usage on an intent created with it', () => {
    expect(() => providers.stripe.create({ amount: '100', currency: 'usd', customer: 'cus_unknown' })).toThrow(/No such customer/);
    const customer = providers.stripe.customers.seed();
    const intent = providers.stripe.create({ amount: '100', currency: 'usd', customer: customer.id, setup_future_usage: 'off_session' });
    expect(() => providers.stripe.update(intent.id, { setup_future_usage: '' })).toThrow(/cannot be unset/);
  });
});
