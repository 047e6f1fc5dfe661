/** The Stripe client through the official SDK: its objects and errors become the service's own here (docs/decisions.md#d34). */
import Stripe from 'stripe';
import { stripeSdk, toCardError } from '@/lib/card/stripe-http';
import { chargeIdOf, readCardEvent, readRefund, toCardEvent, type CardEvent, type CardEventQuery, type RefundFacts } from '@/lib/card/events';
import type { CardSettings } from '@/lib/config';
import { CardProviderError, InvalidSignatureError, ServiceNotConfiguredError } from '@/lib/errors';
import { traceCall } from '@/lib/telemetry';
import { settleWithin, withOneRetry } from '@/lib/upstream/budget';

export type PaymentIntentSummary = ReturnType<typeof summarize>;
export type ChargePage = Awaited<ReturnType<StripeCardProvider['listCharges']>>;

export interface CreateCustomerInput {
  /** The WooCommerce customer (user) id, kept in `metadata.woocommerce_customer_id`. */
  wooCustomerId: number;
  email: string | undefined;
  name: string | undefined;
  idempotencyKey: string;
}

/** Never the session's own "save" (docs/decisions.md#d41); `limited` cards belong to subscriptions. */
export const PAYMENT_ELEMENT_FEATURES: Readonly<Stripe.CustomerSessionCreateParams.Components.PaymentElement.Features> = {
  payment_method_redisplay: 'enabled',
  payment_method_allow_redisplay_filters: ['always', 'unspecified'],
  payment_method_save: 'disabled',
  payment_method_remove: 'disabled',
};

export interface CreateRefundInput {
  intentId: string;
  amount: number;
  /** Names the store's order and refund, so the refund's later event is recognised (lib/card/events.ts). */
  metadata: Record<string, string>;
  idempotencyKey: string;
}

export interface CreateIntentInput {
  orderId: number;
  amount: number;
  currency: string;
  email: string | undefined;
  idempotencyKey: string;
}

export interface IntentChanges {
  amount?: number;
  receiptEmail?: string;
  customerId?: string;
  /** `''` clears it (possible on an intent created without it, as every one here is). */
  setupFutureUsage?: 'off_session' | '';
}

function summarize(intent: Stripe.PaymentIntent) {
  return {
    id: intent.id,
    amount: intent.amount,
    currency: intent.currency,
    status: intent.status,
    clientSecret: intent.client_secret ?? '',
    orderId: intent.metadata?.shop_order_id,
    // What a `requires_capture` intent may still capture (minor units); 0 otherwise.
    amountCapturable: intent.amount_capturable ?? 0,
    amountReceived: intent.amount_received ?? 0,
    chargeId: chargeIdOf(intent.latest_charge),
    receiptEmail: intent.receipt_email ?? undefined,
    customerId: chargeIdOf(intent.customer) || undefined,
    setupFutureUsage: intent.setup_future_usage ?? undefined,
  };
}

function summarizeCharge(charge: Stripe.Charge) {
  const review = charge.review;
  return {
    chargeId: charge.id,
    intentId: chargeIdOf(charge.payment_intent) || undefined,
    status: charge.status,
    captured: charge.captured,
    refunded: charge.refunded,
    amount: charge.amount,
    amountCaptured: charge.amount_captured,
    currency: charge.currency,
    created: charge.created,
    captureBefore: charge.payment_method_details?.card?.capture_before ?? undefined,
    reviewId: chargeIdOf(review) || undefined,
    reviewOpen: review && typeof review === 'object' ? review.open : undefined,
  };
}

/** Stripe's answer to an id it does not know (its own error, or the service's carrying its code). */
const isMissing = (error: unknown) => (error as { code?: unknown } | null)?.code === 'resource_missing';

function isTransient(error: unknown): boolean {
  if (!(error instanceof CardProviderError)) return false;
  return error.type === 'timeout' || error.type === 'StripeConnectionError' || (error.status ?? 0) >= 500;
}

/** A refund Stripe answered in a shape the service cannot read is no proof of anything. */
function refundFacts(operation: string, refund: Stripe.Refund): RefundFacts {
  const facts = readRefund(refund);
  if (!facts) throw new CardProviderError(operation, 'bad_response', undefined, undefined);
  return facts;
}

export type CardProvider = StripeCardProvider;

export class StripeCardProvider {
  private readonly stripe: Stripe;

  constructor(
    private readonly settings: CardSettings,
    private readonly timeoutMs: number,
  ) {
    this.stripe = stripeSdk(settings, timeoutMs, 0);
  }

  /** Stripe Customers and Customer Sessions, for saved cards (docs/decisions.md#d41). */
  readonly customers = {
    /** The customer's id, or undefined when Stripe does not know it or it was deleted (`deleted: true`). */
    retrieveCustomer: async (id: string): Promise<string | undefined> => {
      const customer = await this.find('retrieve customer', (options) => this.stripe.customers.retrieve(id, {}, options));
      return customer === undefined || ('deleted' in customer && customer.deleted) ? undefined : customer.id;
    },

    createCustomer: async (input: CreateCustomerInput): Promise<string> => {
      const metadata = { woocommerce_customer_id: String(input.wooCustomerId) };
      const params = { email: input.email || undefined, name: input.name || undefined, metadata };
      const customer = await this.attempt('create customer', true, (options) =>
        this.stripe.customers.create(params, { idempotencyKey: input.idempotencyKey, ...options }),
      );
      return customer.id;
    },

    createCustomerSession: async (customerId: string): Promise<string> => {
      // Without a key a lost answer is not repeated: a second session would be harmless, but the budget is the request's.
      const components = { payment_element: { enabled: true, features: PAYMENT_ELEMENT_FEATURES } };
      const session = await this.attempt('create customer session', false, (options) =>
        this.stripe.customerSessions.create({ customer: customerId, components }, options),
      );
      return session.client_secret;
    },
  };

  /** `retry` only for reads and a create with its idempotency key: an update without a key is never repeated. */
  private attempt<T>(operation: string, retry: boolean, call: (options: { timeout: number }) => Promise<T>): Promise<T> {
    const timedOut = () => new CardProviderError(operation, 'timeout', undefined, undefined);
    return withOneRetry(
      async (timeoutMs) => {
        try {
          // The SDK retries a closed connection once even with retries off; the race keeps the bound.
          return await traceCall('card', operation, () => settleWithin(call({ timeout: timeoutMs }), timeoutMs, timedOut));
        } catch (error) {
          if (error instanceof CardProviderError) throw error;
          if (error instanceof Stripe.errors.StripeError && isMissing(error)) throw error;
          throw toCardError(operation, error);
        }
      },
      { perAttemptMs: this.timeoutMs, retriable: (error) => retry && isTransient(error), outOfTime: timedOut },
    );
  }

  /** A read: its result, or undefined when Stripe does not know the id. */
  private async find<T>(operation: string, call: (options: { timeout: number }) => Promise<T>): Promise<T | undefined> {
    try {
      return await this.attempt(operation, true, call);
    } catch (error) {
      if (isMissing(error)) return undefined;
      throw error;
    }
  }

  async createPaymentIntent(input: CreateIntentInput): Promise<PaymentIntentSummary> {
    const { paymentMethods: listed = ['card'], capture = 'automatic' } = this.settings;
    // `payment_method_types` is no longer writable under the pinned API (400 since 2026-09-30).
    const automatic = { automatic_payment_methods: { enabled: true } };
    const methods = listed === 'automatic' ? automatic : { allowed_payment_method_types: [...listed] };
    return summarize(await this.attempt('create payment intent', true, (options) =>
      this.stripe.paymentIntents.create(
        {
          amount: input.amount,
          currency: input.currency.toLowerCase(),
          description: `Order #${input.orderId}`,
          metadata: { shop_order_id: String(input.orderId) },
          receipt_email: input.email || undefined,
          ...methods,
          ...(capture === 'automatic' ? {} : { capture_method: 'manual' as const }),
        },
        { idempotencyKey: input.idempotencyKey, ...options },
      ),
    ));
  }

  /** The intent, or undefined when Stripe does not know the id (deleted, other account or mode). */
  async retrievePaymentIntent(id: string): Promise<PaymentIntentSummary | undefined> {
    const intent = await this.find('retrieve payment intent', (options) => this.stripe.paymentIntents.retrieve(id, {}, options));
    return intent && summarize(intent);
  }

  async updatePaymentIntent(id: string, changes: IntentChanges, orderId: number): Promise<PaymentIntentSummary> {
    return summarize(await this.attempt('update payment intent', false, (options) =>
      this.stripe.paymentIntents.update(
        id,
        {
          // An unset key is left out of the request (the SDK skips undefined), so it stays as it is at Stripe.
          amount: changes.amount,
          receipt_email: changes.receiptEmail,
          customer: changes.customerId,
          setup_future_usage: changes.setupFutureUsage,
          metadata: { shop_order_id: String(orderId) },
        },
        options,
      ),
    ));
  }

  async listEvents(query: CardEventQuery) {
    const page = await this.attempt('list events', true, (options) =>
      this.stripe.events.list(
        {
          types: [...query.types],
          created: { gte: query.createdFrom },
          limit: query.limit,
          starting_after: query.startingAfter || undefined,
        },
        options,
      ),
    );
    return {
      events: page.data.map(({ id, type, created, data }) =>
        toCardEvent({ id, type, created, object: data.object as unknown as Record<string, unknown> }),
      ),
      hasMore: page.has_more,
    };
  }

  async retrieveCharge(chargeId: string) {
    const charge = await this.find('retrieve charge', (options) => this.stripe.charges.retrieve(chargeId, { expand: ['review'] }, options));
    return charge && summarizeCharge(charge);
  }

  async listCharges(query: Omit<CardEventQuery, 'types'>) {
    const page = await this.attempt('list charges', true, (options) =>
      this.stripe.charges.list(
        {
          created: { gte: query.createdFrom },
          limit: query.limit,
          expand: ['data.payment_intent'],
          starting_after: query.startingAfter || undefined,
        },
        options,
      ),
    );
    return {
      charges: page.data.map((charge) => {
        const intent = charge.payment_intent;
        return { ...summarizeCharge(charge), intent: intent && typeof intent === 'object' ? summarize(intent) : undefined };
      }),
      hasMore: page.has_more,
    };
  }

  async listChargeRefunds(chargeId: string): Promise<RefundFacts[]> {
    const refunds: RefundFacts[] = [];
    let startingAfter: string | undefined;
    for (let page = 0; page < 10; page += 1) {
      const result = await this.attempt('list refunds', true, (options) =>
        this.stripe.refunds.list({ charge: chargeId, limit: 100, starting_after: startingAfter }, options),
      );
      refunds.push(...result.data.flatMap((refund) => readRefund(refund) ?? []));
      if (!result.has_more || result.data.length === 0) break;
      startingAfter = result.data.at(-1)?.id;
    }
    return refunds.reverse();
  }

  async createRefund(input: CreateRefundInput): Promise<RefundFacts> {
    return refundFacts('create refund', await this.attempt('create refund', true, (options) =>
      this.stripe.refunds.create(
        { payment_intent: input.intentId, amount: input.amount, metadata: input.metadata },
        { idempotencyKey: input.idempotencyKey, ...options },
      ),
    ));
  }

  /** Sets metadata keys of a refund (the others stay): a refund adopted by another store refund names it. */
  async updateRefundMetadata(refundId: string, metadata: Record<string, string>): Promise<RefundFacts> {
    // Setting the same keys again changes nothing, so a lost answer may be retried.
    const refund = await this.attempt('update refund', true, (options) => this.stripe.refunds.update(refundId, { metadata }, options));
    return refundFacts('update refund', refund);
  }

  async capturePaymentIntent(id: string, amount: number | undefined, idempotencyKey: string): Promise<PaymentIntentSummary> {
    return summarize(await this.attempt('capture payment intent', true, (options) =>
      this.stripe.paymentIntents.capture(id, amount === undefined ? {} : { amount_to_capture: amount }, { idempotencyKey, ...options }),
    ));
  }

  async cancelPaymentIntent(id: string, idempotencyKey: string): Promise<PaymentIntentSummary> {
    return summarize(await this.attempt('cancel payment intent', true, (options) =>
      this.stripe.paymentIntents.cancel(id, { cancellation_reason: 'abandoned' }, { idempotencyKey, ...options }),
    ));
  }

  verifyWebhookEvent(rawBody: string, signature: string): CardEvent {
    const secrets = this.settings.webhookSecrets;
    if (secrets.length === 0) throw new ServiceNotConfiguredError('The service is not configured: set STRIPE_WEBHOOK_SECRET');
    // While a secret is being rolled Stripe signs with both (one v1 each); any configured one may match.
    let firstFailure: unknown;
    for (const secret of secrets) {
      let verified: Stripe.Event | undefined;
      try {
        verified = this.stripe.webhooks.constructEvent(rawBody, signature, secret);
      } catch (error) {
        firstFailure ??= error;
      }
      if (verified) return toCardEvent(readCardEvent(verified));
    }
    // Only the SDK's own verification messages are passed on: a JSON parse error would quote the body.
    const message =
      firstFailure instanceof Stripe.errors.StripeSignatureVerificationError
        ? (firstFailure.message.split('\n')[0]?.trim().slice(0, 200) ?? 'Webhook signature verification failed')
        : 'payload is not a valid event';
    throw new InvalidSignatureError(`Webhook Error: ${message}`);
  }
}
