/**
 * Stripe Customers, Customer Sessions and saved payment methods, as Stripe answers them: a deleted
 * customer is retrieved as `{id, object: 'customer', deleted: true}` and refused everywhere else as
 * `resource_missing`; a card paid with `setup_future_usage` and a customer is attached to that customer.
 * Not part of the production bundle.
 */
import { randomBytes } from 'node:crypto';
import { StripeApiError, type StripeIntent } from './objects';

type Params = Record<string, unknown>;

export interface StripeCustomer {
  id: string;
  object: 'customer';
  email: string | null;
  name: string | null;
  metadata: Record<string, string>;
  created: number;
  livemode: false;
}

export interface SavedPaymentMethod {
  id: string;
  object: 'payment_method';
  type: 'card';
  card: { brand: string; last4: string };
  customer: string;
  /** `unspecified` when saved by `setup_future_usage` without the Payment Element's own save checkbox. */
  allow_redisplay: 'always' | 'limited' | 'unspecified';
  created: number;
  livemode: false;
}

export interface StripeCustomerSession {
  object: 'customer_session';
  client_secret: string;
  customer: string;
  components: Params;
  created: number;
  expires_at: number;
  livemode: false;
}

const FEATURE_VALUES: Record<string, readonly string[]> = {
  payment_method_redisplay: ['enabled', 'disabled'],
  payment_method_save: ['enabled', 'disabled'],
  payment_method_remove: ['enabled', 'disabled'],
  payment_method_save_usage: ['on_session', 'off_session'],
};

const newId = (prefix: string) => `${prefix}_${randomBytes(8).toString('hex')}`;
const now = () => Math.floor(Date.now() / 1000);
const invalid = (message: string, param: string, code = 'parameter_invalid_string') => new StripeApiError(400, 'invalid_request_error', code, message, param);
const noSuchCustomer = (id: string, param = 'id') => new StripeApiError(404, 'invalid_request_error', 'resource_missing', `No such customer: '${id}'`, param);

export class StripeCustomers {
  readonly customers = new Map<string, StripeCustomer>();
  readonly deleted = new Set<string>();
  readonly sessions: StripeCustomerSession[] = [];
  readonly paymentMethods = new Map<string, SavedPaymentMethod>();
  /** Intents created with `setup_future_usage`: Stripe will not unset it on those. */
  private readonly createdWithUsage = new Set<string>();

  /** POST /v1/customers (the idempotency key is the handler's). */
  create(params: Params): StripeCustomer {
    const customer: StripeCustomer = {
      id: newId('cus'),
      object: 'customer',
      email: typeof params.email === 'string' ? params.email : null,
      name: typeof params.name === 'string' ? params.name : null,
      metadata: { ...((params.metadata as Record<string, string>) ?? {}) },
      created: now(),
      livemode: false,
    };
    this.customers.set(customer.id, customer);
    return structuredClone(customer);
  }

  /** A customer as a test seeds it (made by the official gateway, say). */
  seed(fields: Partial<Pick<StripeCustomer, 'email' | 'name' | 'metadata'>> = {}): StripeCustomer {
    return this.create(fields as Params);
  }

  /** GET /v1/customers/<id>: a deleted customer is still answered, marked deleted. */
  retrieve(id: string): StripeCustomer | { id: string; object: 'customer'; deleted: true } {
    if (this.deleted.has(id)) return { id, object: 'customer', deleted: true };
    const customer = this.customers.get(id);
    if (!customer) throw noSuchCustomer(id);
    return structuredClone(customer);
  }

  /** DELETE /v1/customers/<id>: its payment methods are detached. */
  delete(id: string): { id: string; object: 'customer'; deleted: true } {
    this.live(id, 'id');
    this.customers.delete(id);
    this.deleted.add(id);
    for (const [pm, method] of this.paymentMethods) if (method.customer === id) this.paymentMethods.delete(pm);
    return { id, object: 'customer', deleted: true };
  }

  /** A customer that exists and is not deleted, or Stripe's `resource_missing`. */
  live(id: unknown, param: string): StripeCustomer {
    const customer = typeof id === 'string' ? this.customers.get(id) : undefined;
    if (!customer) throw noSuchCustomer(String(id), param);
    return customer;
  }

  /** POST /v1/customer_sessions: the Payment Element's component, its feature values checked. */
  createSession(params: Params): StripeCustomerSession {
    if (params.customer === undefined) throw invalid('Missing required param: customer.', 'customer', 'parameter_missing');
    const customer = this.live(params.customer, 'customer');
    const components = (params.components ?? {}) as Params;
    const enabled = Object.values(components).some((component) => (component as Params | undefined)?.enabled === 'true');
    if (!enabled) throw invalid('At least 1 component must be enabled.', 'components', 'parameter_missing');
    const features = ((components.payment_element as Params | undefined)?.features ?? {}) as Params;
    for (const [name, value] of Object.entries(features)) {
      if (name === 'payment_method_allow_redisplay_filters') {
        const values = Object.values((value ?? {}) as Record<string, string>);
        if (!values.every((v) => ['always', 'limited', 'unspecified'].includes(v))) throw invalid('Invalid allow_redisplay filter.', `components[payment_element][features][${name}]`);
        continue;
      }
      if (name === 'payment_method_redisplay_limit') continue;
      const allowed = FEATURE_VALUES[name];
      if (!allowed) throw invalid(`Received unknown parameter: components[payment_element][features][${name}]`, `components[payment_element][features][${name}]`, 'parameter_unknown');
      if (typeof value !== 'string' || !allowed.includes(value)) throw invalid(`Invalid ${name}: must be one of ${allowed.join(', ')}`, `components[payment_element][features][${name}]`);
    }
    const session: StripeCustomerSession = {
      object: 'customer_session',
      client_secret: `cuss_secret_${randomBytes(16).toString('hex')}`,
      customer: customer.id,
      components: structuredClone(components),
      created: now(),
      expires_at: now() + 30 * 60,
      livemode: false,
    };
    this.sessions.push(session);
    return structuredClone(session);
  }

  /** What a Customer Session's Payment Element would list: the customer's cards its filters allow (default: `always`). */
  cardsShownBy(clientSecret: string): SavedPaymentMethod[] {
    const session = this.sessions.find((s) => s.client_secret === clientSecret);
    if (!session || this.deleted.has(session.customer)) return [];
    const features = ((session.components.payment_element as Params | undefined)?.features ?? {}) as Params;
    if (features.payment_method_redisplay !== 'enabled') return [];
    const filters = Object.values((features.payment_method_allow_redisplay_filters ?? { 0: 'always' }) as Record<string, string>);
    return this.list(session.customer).filter((method) => filters.includes(method.allow_redisplay));
  }

  /**
   * What Stripe.js asks for a Payment Element (GET /v1/elements/sessions, publishable key): the saved cards
   * of the customer session, only for an intent of that same customer.
   */
  elementsSession(intent: Pick<StripeIntent, 'customer'>, customerSessionSecret: string | null): { object: 'elements_session'; customer: { payment_methods: SavedPaymentMethod[] } | null } {
    if (!customerSessionSecret) return { object: 'elements_session', customer: null };
    const session = this.sessions.find((s) => s.client_secret === customerSessionSecret);
    if (!session || session.expires_at < now()) throw invalid('No such customer session.', 'customer_session_client_secret', 'resource_missing');
    if (session.customer !== intent.customer) {
      throw invalid("The customer session's customer does not match the PaymentIntent's customer.", 'customer_session_client_secret', 'parameter_invalid_string');
    }
    return { object: 'elements_session', customer: { payment_methods: this.cardsShownBy(customerSessionSecret) } };
  }

  /** GET /v1/customers/<id>/payment_methods, newest first. */
  list(customerId: string): SavedPaymentMethod[] {
    return [...this.paymentMethods.values()].filter((method) => method.customer === customerId).reverse().map((method) => structuredClone(method));
  }

  /** A saved card, when `id` names one of `customer`'s (what a returning customer pays with). */
  savedCard(id: string, customer: string | null | undefined): { brand: string; last4: string } | undefined {
    const method = this.paymentMethods.get(id);
    if (!method) return undefined;
    if (method.customer !== customer) {
      throw invalid('The provided PaymentMethod belongs to a different Customer than the PaymentIntent.', 'payment_method', 'payment_method_invalid_parameter');
    }
    return method.card;
  }

  /** After a successful payment: an intent with a customer and `setup_future_usage` saves its card to that customer. */
  attachFromIntent(intent: StripeIntent, card: { brand: string; last4: string }): void {
    if (!intent.customer || !intent.setup_future_usage || !intent.payment_method) return;
    if (this.paymentMethods.get(intent.payment_method)?.customer === intent.customer) return;
    // A test card id stands for a new card each time (pm_card_visa makes a new PaymentMethod at Stripe).
    const id = intent.payment_method.startsWith('pm_card_') ? newId('pm') : intent.payment_method;
    this.paymentMethods.set(id, { id, object: 'payment_method', type: 'card', card: { ...card }, customer: intent.customer, allow_redisplay: 'unspecified', created: now(), livemode: false });
    intent.payment_method = id;
  }

  /** The intent's `customer` and `setup_future_usage` parameters, as create and update take them. */
  applyToIntent(intent: StripeIntent, params: Params, creating: boolean): void {
    if (params.customer !== undefined) {
      intent.customer = params.customer === '' ? null : this.live(params.customer, 'customer').id;
    }
    const usage = params.setup_future_usage;
    if (usage === undefined) return;
    if (usage === '') {
      if (!creating && intent.setup_future_usage && this.createdWithUsage.has(intent.id)) {
        throw invalid('setup_future_usage cannot be unset on a PaymentIntent created with it.', 'setup_future_usage');
      }
      intent.setup_future_usage = null;
      return;
    }
    if (usage !== 'on_session' && usage !== 'off_session') throw invalid('Invalid setup_future_usage: must be one of on_session or off_session', 'setup_future_usage');
    intent.setup_future_usage = usage;
    if (creating) this.createdWithUsage.add(intent.id);
  }
}

/**
 * Routes: POST /v1/customers, GET | DELETE /v1/customers/<id>, GET /v1/customers/<id>/payment_methods,
 * POST /v1/customer_sessions. Undefined for any other path. Writes run under `idempotent` (the model's).
 */
export async function customerRoute(
  customers: StripeCustomers,
  request: { method: string; path: string; params: Params },
  idempotent: (run: () => unknown) => Promise<{ status: number; body: unknown }>,
): Promise<{ status: number; body: unknown } | undefined> {
  const { method, path, params } = request;
  if (path === '/v1/customers' && method === 'POST') return idempotent(() => customers.create(params));
  if (path === '/v1/customer_sessions' && method === 'POST') return idempotent(() => customers.createSession(params));
  const one = /^\/v1\/customers\/([^/]+)$/.exec(path);
  const id = decodeURIComponent(one?.[1] ?? '');
  if (one && method === 'GET') return { status: 200, body: customers.retrieve(id) };
  if (one && method === 'DELETE') return { status: 200, body: customers.delete(id) };
  const methods = /^\/v1\/customers\/([^/]+)\/payment_methods$/.exec(path);
  if (methods && method === 'GET') {
    const customerId = decodeURIComponent(methods[1] ?? '');
    customers.live(customerId, 'customer');
    return { status: 200, body: { object: 'list', url: path, has_more: false, data: customers.list(customerId) } };
  }
  return undefined;
}
