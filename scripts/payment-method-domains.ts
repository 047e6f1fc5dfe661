/** Registering the storefront's domains with Stripe, for `npm run setup:domains` (the only caller). */
import type { PaymentMethodDomain, PaymentMethodDomains } from '../lib/checkout/express-domains';

export type DomainOutcome = 'created' | 'enabled' | 'validated' | 'unchanged';

export interface DomainRegistration {
  domain: string;
  outcome: DomainOutcome;
  applePay: PaymentMethodDomain['applePay'];
}

/** Never creates a domain twice, so the command can run on every deploy. */
export async function registerDomains(domains: readonly string[], api: PaymentMethodDomains): Promise<DomainRegistration[]> {
  const results: DomainRegistration[] = [];
  for (const domain of new Set(domains.map((d) => d.trim().toLowerCase()).filter((d) => d !== ''))) {
    const existing = await api.find(domain);
    let outcome: DomainOutcome = 'unchanged';
    let current = existing ?? (await api.create(domain));
    if (!existing) outcome = 'created';
    else if (!current.enabled) {
      current = await api.enable(current.id);
      outcome = 'enabled';
    }
    if (existing && current.applePay.status !== 'active') {
      current = await api.validate(current.id);
      if (outcome === 'unchanged') outcome = 'validated';
    }
    results.push({ domain, outcome, applePay: current.applePay });
  }
  return results;
}
