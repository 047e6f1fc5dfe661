import type Stripe from 'stripe';
import { CardProviderError } from '@/lib/errors';

/** Stripe Customers and Customer Sessions, for saved cards (docs/decisions.md#d41). */
export interface CustomerProvider {
  /** The customer's id, or undefined when Stripe does not know it or it was deleted (`deleted: true`). */
  retrieveCustomer(id: string): Promise<string | undefined>;
  createCustomer(input: CreateCustomerInput): Promise<string>;
  createCustomerSession(customerId: string): Promise<string>;
}

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

const isMissing = (error: unknown) =>
  (error instanceof CardProviderError && error.code === 'resource_missing') ||
  (typeof error === 'object' && error !== null && (error as { code?: unknown }).code === 'resource_missing');

export class StripeCustomers implements CustomerProvider {
  constructor(
    private readonly stripe: Stripe,
    private readonly attempt: Attempt,
  ) {}

  async retrieveCustomer(id: string): Promise<string | undefined> {
    try {
      const customer = await this.attempt('retrieve customer', true, (options) => this.stripe.customers.retrieve(id, {}, options));
      return 'deleted' in customer && customer.deleted ? undefined : customer.id;
    } catch (error) {
      if (isMissing(error)) return undefined;
      throw error;
    }
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
    const session = await this.attempt('create customer session', false, (options) =>
      this.stripe.customerSessions.create(
        { customer: customerId, components: { payment_element: { enabled: true, features: { ...PAYMENT_ELEMENT_FEATURES, payment_method_allow_redisplay_filters: [...PAYMENT_ELEMENT_FEATURES.payment_method_allow_redisplay_filters] } } } },
        options,
      ),
    );
    return session.client_secret;
  }
}
