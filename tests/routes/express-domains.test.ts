import { beforeEach, describe, expect, it } from 'vitest';
import { storefrontDomain, stripePaymentMethodDomains, unregisteredStorefrontDomains } from '@/lib/checkout/express-domains';
import { registerDomains } from '@/scripts/payment-method-domains';
import { paymentMethodDomainsOf } from '@/stand-ins/stripe/payment-method-domains';
import { TEST_CRON_SECRET, TEST_STOREFRONT_ORIGIN, TEST_STRIPE_KEY, useTestEnv } from '../support/env';
import { useProviders } from '../support/providers';

const providers = useProviders();
const api = () => stripePaymentMethodDomains({ secretKey: TEST_STRIPE_KEY, apiBaseUrl: undefined });

beforeEach(() => {
  useTestEnv();
  providers.reset();
});

describe('registering the storefront’s domains for Apple Pay', () => {
  it('registers each domain once: a second run changes nothing', async () => {
    const first = await registerDomains(['shop.example', 'WWW.shop.example', 'shop.example'], api());
    expect(first).toEqual([
      { domain: 'shop.example', outcome: 'created', applePay: { status: 'active', error: undefined } },
      { domain: 'www.shop.example', outcome: 'created', applePay: { status: 'active', error: undefined } },
    ]);
    const again = await registerDomains(['shop.example', 'www.shop.example'], api());
    expect(again.map((r) => r.outcome)).toEqual(['unchanged', 'unchanged']);
    expect(providers.callsTo('card', 'POST', /payment_method_domains$/)).toHaveLength(2);
    expect(paymentMethodDomainsOf(providers.stripe).domains.map((d) => d.domain_name)).toEqual(['shop.example', 'www.shop.example']);
  });

  it('enables a domain registered but disabled, and validates one whose Apple Pay is inactive', async () => {
    const domains = paymentMethodDomainsOf(providers.stripe);
    domains.applePayUnverified.add('pay.example');
    await registerDomains(['off.example', 'pay.example'], api());
    domains.domains.find((d) => d.domain_name === 'off.example')!.enabled = false;
    domains.applePayUnverified.clear();

    const results = await registerDomains(['off.example', 'pay.example'], api());
    expect(results.map((r) => [r.domain, r.outcome, r.applePay.status])).toEqual([
      ['off.example', 'enabled', 'active'],
      ['pay.example', 'validated', 'active'],
    ]);
    expect(providers.callsTo('card', 'POST', /payment_method_domains$/)).toHaveLength(2);
  });
});

describe('unregisteredStorefrontDomains', () => {
  it('names each allowed https origin whose domain is not registered, disabled or without Apple Pay, and skips local ones', async () => {
    const domains = paymentMethodDomainsOf(providers.stripe);
    domains.applePayUnverified.add('nopay.example');
    await registerDomains(['shop.example', 'off.example', 'nopay.example'], api());
    domains.domains.find((d) => d.domain_name === 'off.example')!.enabled = false;

    const origins = ['https://shop.example', 'https://www.shop.example', 'https://off.example', 'https://nopay.example', 'http://localhost:3001', 'https://127.0.0.1:8443'];
    expect(await unregisteredStorefrontDomains(origins, api())).toEqual([
      { domain: 'www.shop.example', problem: 'not_registered' },
      { domain: 'off.example', problem: 'disabled' },
      { domain: 'nopay.example', problem: 'apple_pay_inactive' },
    ]);
  });

  it('takes only https origins on a named host as storefront domains', () => {
    expect(['https://Shop.Example:8443', 'http://shop.example', 'https://localhost:3000', 'https://10.0.0.1', 'not a url'].map(storefrontDomain)).toEqual([
      'shop.example',
      undefined,
      undefined,
      undefined,
      undefined,
    ]);
  });
});

describe('the deep health check and the storefront’s wallet domains', () => {
  const deepHealth = async () => {
    const { GET } = await import('@/app/api/health/route');
    const response = await GET(new Request('http://localhost:3000/api/health', { headers: { authorization: `Bearer ${TEST_CRON_SECRET}` } }));
    return { status: response.status, body: await response.json() };
  };

  it('names an allowed storefront origin whose domain is not registered, without degrading the status', async () => {
    useTestEnv({ CRON_SECRET: TEST_CRON_SECRET });
    const before = await deepHealth();
    expect(before.status).toBe(200);
    expect(before.body.walletDomains).toEqual([{ domain: new URL(TEST_STOREFRONT_ORIGIN).hostname, problem: 'not_registered' }]);

    await registerDomains([new URL(TEST_STOREFRONT_ORIGIN).hostname], api());
    const after = await deepHealth();
    expect(after.status).toBe(200);
    expect(after.body).not.toHaveProperty('walletDomains');
  });
});
