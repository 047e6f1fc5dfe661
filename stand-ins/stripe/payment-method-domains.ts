/**
 * The Stripe stand-in's payment method domains (POST/GET /v1/payment_method_domains, GET/POST …/<id>,
 * POST …/<id>/validate), as docs.stripe.com/api/payment_method_domains describes them. Apple Pay is active on
 * a new domain, as in test mode (no domain-association file), unless a test marks the domain unverified.
 * Not modelled: what Stripe answers to a second create of the same domain (the service lists first).
 */
import { randomBytes } from 'node:crypto';
import type { StripeModel } from './model';
import { StripeApiError } from './objects';

interface DomainRecord {
  id: string;
  object: 'payment_method_domain';
  domain_name: string;
  enabled: boolean;
  created: number;
  livemode: false;
  apple_pay: { status: 'active' | 'inactive'; status_details?: { error_message: string } };
  google_pay: { status: 'active' };
  link: { status: 'active' };
  paypal: { status: 'active' };
}

interface DomainsState {
  domains: DomainRecord[];
  /** Domains whose Apple Pay verification fails (no association file served), as a test sets them. */
  applePayUnverified: Set<string>;
}

const stateOf = new WeakMap<StripeModel, DomainsState>();

export function paymentMethodDomainsOf(model: StripeModel): DomainsState {
  let state = stateOf.get(model);
  if (!state) {
    state = { domains: [], applePayUnverified: new Set() };
    stateOf.set(model, state);
  }
  return state;
}

function applePayOf(state: DomainsState, domain: string): DomainRecord['apple_pay'] {
  return state.applePayUnverified.has(domain)
    ? { status: 'inactive', status_details: { error_message: 'The domain-association file could not be downloaded from the domain.' } }
    : { status: 'active' };
}

const truthy = (value: unknown) => value === true || value === 'true';

/** The answer to a payment method domains call, or undefined when the path is not one. */
export function paymentMethodDomainsRoute(
  model: StripeModel,
  method: string,
  path: string,
  query: URLSearchParams,
  params: Record<string, unknown>,
): { status: number; body: unknown } | undefined {
  const state = paymentMethodDomainsOf(model);
  const one = /^\/v1\/payment_method_domains\/([^/]+)(\/validate)?$/.exec(path);
  const byId = (id: string) => {
    const found = state.domains.find((domain) => domain.id === id);
    if (!found) throw new StripeApiError(404, 'invalid_request_error', 'resource_missing', `No such payment_method_domain: '${id}'`, 'payment_method_domain');
    return found;
  };

  if (path === '/v1/payment_method_domains' && method === 'POST') {
    const name = typeof params.domain_name === 'string' ? params.domain_name.trim().toLowerCase() : '';
    if (name === '') throw new StripeApiError(400, 'invalid_request_error', 'parameter_missing', 'Missing required param: domain_name.', 'domain_name');
    const record: DomainRecord = {
      id: `pmd_${randomBytes(12).toString('hex')}`,
      object: 'payment_method_domain',
      domain_name: name,
      enabled: params.enabled === undefined ? true : truthy(params.enabled),
      created: Math.floor(Date.now() / 1000),
      livemode: false,
      apple_pay: applePayOf(state, name),
      google_pay: { status: 'active' },
      link: { status: 'active' },
      paypal: { status: 'active' },
    };
    state.domains.push(record);
    return { status: 200, body: structuredClone(record) };
  }
  if (path === '/v1/payment_method_domains' && method === 'GET') {
    const name = query.get('domain_name');
    const enabled = query.get('enabled');
    const limit = Math.min(Math.max(Number(query.get('limit') ?? 10) || 10, 1), 100);
    const matching = [...state.domains]
      .reverse()
      .filter((domain) => (name === null || domain.domain_name === name.toLowerCase()) && (enabled === null || domain.enabled === truthy(enabled)));
    return { status: 200, body: { object: 'list', url: '/v1/payment_method_domains', has_more: matching.length > limit, data: structuredClone(matching.slice(0, limit)) } };
  }
  if (one && method === 'GET' && !one[2]) return { status: 200, body: structuredClone(byId(decodeURIComponent(one[1]!))) };
  if (one && method === 'POST') {
    const record = byId(decodeURIComponent(one[1]!));
    if (one[2]) record.apple_pay = applePayOf(state, record.domain_name);
    else if (params.enabled !== undefined) record.enabled = truthy(params.enabled);
    return { status: 200, body: structuredClone(record) };
  }
  return undefined;
}
