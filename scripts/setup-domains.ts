/**
 * npm run setup:domains -- --domain shop.example [--domain www.shop.example]
 * Registers the storefront's domains with Stripe (payment method domains), so Apple Pay, Google Pay and Link
 * show in the Express Checkout Element there. Without --domain: the https origins of ALLOWED_ORIGINS.
 * Safe to run on every deploy: a domain registered already is left as it is (enabled and validated again if needed).
 */
import { parseArgs } from 'node:util';
import { parseConfig, requireSetting } from '../lib/config';
import { storefrontDomain, stripePaymentMethodDomains } from '../lib/checkout/express-domains';
import { registerDomains } from './payment-method-domains';
import { nextEnvironment } from './configuration';

const { values } = parseArgs({ options: { domain: { type: 'string', multiple: true } } });
const config = parseConfig(nextEnvironment(process.cwd(), false).env);
const domains = values.domain?.length ? values.domain : config.allowedOrigins.map(storefrontDomain).filter((d): d is string => d !== undefined);
if (domains.length === 0) {
  console.error('No domain to register: pass --domain shop.example, or list the storefront’s https origins in ALLOWED_ORIGINS.');
  process.exit(1);
}

const results = await registerDomains(domains, stripePaymentMethodDomains(requireSetting(config, 'card')));
for (const { domain, outcome, applePay } of results) {
  const apple = applePay.status === 'active' ? 'Apple Pay active' : `Apple Pay ${applePay.status}${applePay.error ? `: ${applePay.error}` : ''}`;
  console.log(`${domain}: ${outcome} (${apple})`);
}
if (results.some((result) => result.applePay.status !== 'active')) {
  console.log('Apple Pay needs /.well-known/apple-developer-merchantid-domain-association on the domain (live mode); serve it, then run this again.');
}
