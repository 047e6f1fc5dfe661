/** Wallets show only on a domain registered with Stripe's payment method domains API: registering and checking them. */
import type Stripe from 'stripe';
import { stripeSdk } from '@/lib/card/stripe-http';
import type { CardSettings } from '@/lib/config';

export interface PaymentMethodDomain {
  id: string;
  domainName: string;
  enabled: boolean;
  /** Apple Pay needs one more step (the domain-association file in live mode); `error` says what failed. */
  applePay: { status: string; error: string | undefined };
}

export interface PaymentMethodDomains {
  find(domainName: string): Promise<PaymentMethodDomain | undefined>;
  create(domainName: string): Promise<PaymentMethodDomain>;
  enable(id: string): Promise<PaymentMethodDomain>;
  validate(id: string): Promise<PaymentMethodDomain>;
}

function summarize(domain: Stripe.PaymentMethodDomain): PaymentMethodDomain {
  return {
    id: domain.id,
    domainName: domain.domain_name,
    enabled: domain.enabled,
    applePay: { status: domain.apple_pay?.status ?? 'inactive', error: domain.apple_pay?.status_details?.error_message },
  };
}

export function stripePaymentMethodDomains(settings: Pick<CardSettings, 'secretKey' | 'apiBaseUrl'>, timeoutMs = 10_000): PaymentMethodDomains {
  const stripe = stripeSdk(settings, timeoutMs, 2);
  return {
    async find(domainName) {
      const page = await stripe.paymentMethodDomains.list({ domain_name: domainName, limit: 1 });
      const found = page.data[0];
      return found ? summarize(found) : undefined;
    },
    create: async (domainName) => summarize(await stripe.paymentMethodDomains.create({ domain_name: domainName, enabled: true })),
    enable: async (id) => summarize(await stripe.paymentMethodDomains.update(id, { enabled: true })),
    validate: async (id) => summarize(await stripe.paymentMethodDomains.validate(id)),
  };
}

/** https only, never a local host or an IP address: wallets refuse both. */
export function storefrontDomain(origin: string): string | undefined {
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return undefined;
  }
  const host = url.hostname.toLowerCase();
  if (url.protocol !== 'https:' || host === 'localhost' || host.endsWith('.localhost') || /^[\d.]+$/.test(host) || host.includes(':')) return undefined;
  return host;
}

export interface UnregisteredDomain {
  domain: string;
  problem: 'not_registered' | 'disabled' | 'apple_pay_inactive';
}

export async function unregisteredStorefrontDomains(allowedOrigins: readonly string[], api: PaymentMethodDomains): Promise<UnregisteredDomain[]> {
  const domains = [...new Set(allowedOrigins.map(storefrontDomain).filter((d): d is string => d !== undefined))];
  const found = await Promise.all(domains.map((domain) => api.find(domain)));
  const problems: UnregisteredDomain[] = [];
  domains.forEach((domain, i) => {
    const record = found[i];
    if (!record) problems.push({ domain, problem: 'not_registered' });
    else if (!record.enabled) problems.push({ domain, problem: 'disabled' });
    else if (record.applePay.status !== 'active') problems.push({ domain, problem: 'apple_pay_inactive' });
  });
  return problems;
}
