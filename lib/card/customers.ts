import type Stripe from 'stripe';

export interface CreateCustomerInput {
  /** The WooCommerce customer (user) id, kept in `metadata.woocommerce_customer_id`. */
  wooCustomerId: number;
  email: string | undefined;
  name: string | undefined;
  idempotencyKey: string;
}

/** Never the session's own "save" (docs/decisions.md#d41); `limited` cards belong to subscriptions. */
export const PAYMENT_ELEMENT_FEATURES = {
  payment_method_redisplay: 'enabled',
  payment_method_allow_redisplay_filters: ['always', 'unspecified'],
  payment_method_save: 'disabled',
  payment_method_remove: 'disabled',
} as const;

type Attempt = <T>(operation: string, retry: boolean, call: (options: { timeout: number }) => Promise<T>) => Promise<T>;

/** Stripe's answer to an id it does not know (its own error, or the service's carrying its code). */
export const isMissing = (error: unknown) => (error as { code?: unknown } | null)?.code === 'resource_missing';

/** The call's result, or undefined when Stripe does not know the id. */
export async function unlessMissing<T>(call: Promise<T>): Promise<T | undefined> {
  try {
    return await call;
  } catch (error) {
    if (isMissing(error)) return undefined;
    throw error;
  }
}

/** Stripe Customers and Customer Sessions, for saved cards (docs/decisions.md#d41). */
export class StripeCustomers {
  constructor(
    private readonly stripe: Stripe,
    private readonly attempt: Attempt,
  ) {}

  /** The customer's id, or undefined when Stripe does not know it or it was deleted (`deleted: true`). */
  async retrieveCustomer(id: string): Promise<string | undefined> {
    const retrieve = (options: { timeout: number }) => this.stripe.customers.retrieve(id, {}, options);
    const customer = await unlessMissing(this.attempt('retrieve customer', true, retrieve));
    return customer === undefined || ('deleted' in customer && customer.deleted) ? undefined : customer.id;
  }

  async createCustomer(input: CreateCustomerInput): Promise<string> {
    const customer = await this.attempt('create customer', true, (options) =>
      this.stripe.customers.create(
        {
          ...(input.email ? { email: input.email } : {}),
          ...(input.name ? { name: input.name } : {}),
          metadata: { woocommerce_customer_id: String(input.wooCustomerId) },
        },
        { idempotencyKey: input.idempotencyKey, ...options },
      ),
    );
    return customer.id;
  }

  async createCustomerSession(customerId: string): Promise<string> {
    // Without a key a lost answer is not repeated: a second session would be harmless, but the budget is the request's.
    const filters = [...PAYMENT_ELEMENT_FEATURES.payment_method_allow_redisplay_filters];
    const features = { ...PAYMENT_ELEMENT_FEATURES, payment_method_allow_redisplay_filters: filters };
    const components = { payment_element: { enabled: true, features } };
    const session = await this.attempt('create customer session', false, (options) =>
      this.stripe.customerSessions.create({ customer: customerId, components }, options),
    );
    return session.client_secret;
  }
}
