/** Wallets show only on a domain registered with Stripe's payment method domains API: registering and checking them. */
import type Stripe from 'stripe';
import { stripeSdk } from '@/lib/card/stripe-http';
import type { CardSettings } from '@/lib/config';

export type PaymentMethodDomain = ReturnType<typeof summarize>;
export type PaymentMethodDomains = ReturnType<typeof stripePaymentMethodDomains>;

function summarize(domain: Stripe.PaymentMethodDomain) {
  return {
    id: domain.id,
    domainName: domain.domain_name,
    enabled: domain.enabled,
    // Apple Pay needs one more step (the domain-association file in live mode); `error` says what failed.
    applePay: { status: domain.apple_pay?.status ?? 'inactive', error: domain.apple_pay?.status_details?.error_message },
  };
}

export function stripePaymentMethodDomains(settings: Pick<CardSettings, 'secretKey' | 'apiBaseUrl'>, timeoutMs = 10_000) {
  const stripe = stripeSdk(settings, timeoutMs, 2);
  return {
    async find(domainName: string) {
      const [found] = (await stripe.paymentMethodDomains.list({ domain_name: domainName, limit: 1 })).data;
      return found ? summarize(found) : undefined;
    },
    create: async (domainName: string) => summarize(await stripe.paymentMethodDomains.create({ domain_name: domainName, enabled: true })),
    enable: async (id: string) => summarize(await stripe.paymentMethodDomains.update(id, { enabled: true })),
    validate: async (id: string) => summarize(await stripe.paymentMethodDomains.validate(id)),
  };
}

/** https only, never a local host or an IP address: wallets refuse both. */
export function storefrontDomain(origin: string): string | undefined {
  if (!URL.canParse(origin)) return undefined;
  const url = new URL(origin);
  const host = url.hostname.toLowerCase();
  if (url.protocol !== 'https:' || host === 'localhost' || host.endsWith('.localhost') || /^[\d.]+$/.test(host) || host.includes(':')) return undefined;
  return host;
}

export async function unregisteredStorefrontDomains(allowedOrigins: readonly string[], api: PaymentMethodDomains) {
  const domains = [...new Set(allowedOrigins.map(storefrontDomain).filter((d): d is string => d !== undefined))];
  const found = await Promise.all(domains.map((domain) => api.find(domain)));
  const problemOf = (record: PaymentMethodDomain | undefined) =>
    !record ? 'not_registered' : !record.enabled ? 'disabled' : record.applePay.status !== 'active' ? 'apple_pay_inactive' : undefined;
  return domains.flatMap((domain, i) => {
    const problem = problemOf(found[i]);
    return problem ? [{ domain, problem }] : [];
  });
}
