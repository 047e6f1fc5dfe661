/**
 * An in-memory Stripe PaymentIntents API, shared by the tests' msw handlers
 * and the local HTTP stand-in, so the real `stripe` SDK is what runs against it.
 *
 * Modelled on Stripe's documented behaviour: form-encoded parameters;
 * `Idempotency-Key` replays the first answer for the same parameters, answers
 * 400 `idempotency_error` for other parameters and 409 `idempotency_error`
 * (`idempotency_key_in_use`) while the first request with that key is still
 * executing; Stripe-shaped errors;
 * amounts only updatable before the intent is processing, succeeded or canceled.
 * It is not part of the production bundle.
 */
import { randomBytes } from 'node:crypto';
import { StripeEventLog, type StripeEvent } from './events';
import { StripeCustomers } from './customers';
import { StripeApiError, type StripeIntent, type StripeObject } from './objects';
import { StripeWebhookEndpoints } from './webhook-endpoints';

/**
 * Stripe's test payment methods the stand-in knows (docs.stripe.com/testing):
 * the ones that succeed, and the ones that are declined with their decline code.
 */
export const TEST_PAYMENT_METHODS: Record<string, { brand: string; last4: string; decline?: { code: string; decline_code: string; message: string } }> = {
  pm_card_visa: { brand: 'visa', last4: '4242' },
  pm_card_mastercard: { brand: 'mastercard', last4: '4444' },
  pm_card_chargeDeclined: {
    brand: 'visa',
    last4: '0002',
    decline: { code: 'card_declined', decline_code: 'generic_decline', message: 'Your card was declined.' },
  },
  pm_card_chargeDeclinedInsufficientFunds: {
    brand: 'visa',
    last4: '9995',
    decline: { code: 'card_declined', decline_code: 'insufficient_funds', message: 'Your card has insufficient funds.' },
  },
};

/** What a confirmation did, for whoever delivers Stripe's events. */
export type ConfirmOutcome = {
  type: 'payment_intent.succeeded' | 'payment_intent.payment_failed' | 'payment_intent.amount_capturable_updated';
  intent: StripeIntent;
  /** The id the event has in the Events API too, as Stripe's webhook and `GET /v1/events` share one event. */
  eventId: string;
};

type Params = Record<string, unknown>;

/** `metadata[shop_order_id]=1&amount=5` → `{metadata: {shop_order_id: '1'}, amount: '5'}`. */
export function parseFormBody(body: string): Params {
  const result: Params = {};
  for (const [rawKey, value] of new URLSearchParams(body)) {
    const path = rawKey.split(/\[|\]\[|\]/).filter((part) => part !== '');
    let target = result;
    path.forEach((part, index) => {
      if (index === path.length - 1) {
        target[part] = value;
      } else {
        target[part] ??= {};
        target = target[part] as Params;
      }
    });
  }
  return result;
}

/** The methods the stand-in's "dashboard" has turned on: what an intent without a list may use. */
const DASHBOARD_METHODS = ['card', 'link', 'sepa_debit'];

/** How long Stripe holds an online card authorization (docs.stripe.com/payments/place-a-hold-on-a-payment-method). */
const AUTHORIZATION_SECONDS = 7 * 24 * 3600;

/** A charge as the stand-in keeps it. */
export interface StripeChargeRecord {
  id: string;
  intent: string;
  amount: number;
  amount_captured: number;
  amount_refunded: number;
  captured: boolean;
  refunded: boolean;
  currency: string;
  created: number;
  /** An uncaptured card authorization's deadline (Unix seconds). */
  capture_before?: number;
}

const THREE_DECIMAL = new Set(['bhd', 'jod', 'kwd', 'omr', 'tnd']);
const UPDATABLE: StripeIntent['status'][] = ['requires_payment_method', 'requires_confirmation', 'requires_action'];

function invalid(message: string, param: string, code = 'parameter_invalid_integer'): StripeApiError {
  return new StripeApiError(400, 'invalid_request_error', code, message, param);
}

function parseAmount(value: unknown, currency: string): number {
  if (typeof value !== 'string' || !/^\d+$/.test(value)) throw invalid('Invalid integer: amount', 'amount');
  const amount = Number(value);
  if (amount < 1) throw invalid('Amount must be at least 1', 'amount', 'amount_too_small');
  if (amount > 99_999_999) throw invalid('Amount must be no more than 999,999.99', 'amount', 'amount_too_large');
  if (THREE_DECIMAL.has(currency) && amount % 10 !== 0) {
    throw invalid('Amounts in this currency must be a multiple of 10', 'amount', 'invalid_amount');
  }
  return amount;
}

export class StripeModel {
  readonly intents = new Map<string, StripeIntent>();
  /** Customers, Customer Sessions and saved cards (customers.ts). */
  readonly customers = new StripeCustomers();
  /** `payment_intent.succeeded` / `payment_intent.payment_failed`, recorded by succeed() and fail(). */
  readonly events = new StripeEventLog();
  /** The webhook endpoints API (webhook-endpoints.ts). */
  readonly webhookEndpoints = new StripeWebhookEndpoints();
  private readonly idempotencyCache = new Map<string, { fingerprint: string; status: number; body: unknown }>();
  /** Keys whose first request is executing right now. */
  private readonly executing = new Set<string>();
  /**
   * Test control: runs when a write has taken its idempotency key and before it
   * executes, so a test can hold it there ("Stripe is still executing it") and
   * order another request against it without a sleep.
   */
  beforeExecute: ((write: { path: string; idempotencyKey: string | null }) => Promise<void>) | undefined;
  private sequence = 0;

  private newId(prefix: string): string {
    this.sequence += 1;
    return `${prefix}_${this.sequence.toString().padStart(6, '0')}${randomBytes(6).toString('hex')}`;
  }

  /**
   * Runs a write with Stripe's idempotency rules (docs.stripe.com/api/idempotent_requests):
   * the first answer (success or error) for a key is replayed for the same
   * endpoint and parameters; other parameters are refused with 400
   * `idempotency_error`; a request arriving while the first one with its key
   * still executes is refused with 409 (Stripe: "the request conflicts with
   * another request (perhaps due to using the same idempotent key)"), saves
   * nothing, and may be retried.
   */
  async idempotent<T>(key: string | null, path: string, fingerprint: string, run: () => T): Promise<{ status: number; body: unknown }> {
    if (key) {
      if (this.executing.has(key)) {
        throw new StripeApiError(
          409,
          'idempotency_error',
          'idempotency_key_in_use',
          'There is currently another in-progress request using this idempotency key. Please try again later.',
        );
      }
      const previous = this.idempotencyCache.get(key);
      if (previous) {
        if (previous.fingerprint !== fingerprint) {
          throw new StripeApiError(
            400,
            'idempotency_error',
            undefined,
            `Keys for idempotent requests can only be used with the same parameters they were first used with. Try using a key other than '${key}' if you meant to execute a different request.`,
          );
        }
        return { status: previous.status, body: previous.body };
      }
      this.executing.add(key);
    }
    try {
      // Only a test's hold makes the execution wait; without one it runs at once, as one step.
      if (this.beforeExecute) await this.beforeExecute({ path, idempotencyKey: key });
      let answer: { status: number; body: unknown };
      try {
        answer = { status: 200, body: run() };
      } catch (error) {
        if (!(error instanceof StripeApiError)) throw error;
        answer = { status: error.status, body: error.toJSON() };
      }
      if (key) this.idempotencyCache.set(key, { fingerprint, ...answer });
      return answer;
    } finally {
      if (key) this.executing.delete(key);
    }
  }

  create(params: Params): StripeIntent {
    const currency = typeof params.currency === 'string' ? params.currency : '';
    if (!/^[a-z]{3}$/.test(currency)) throw invalid('Missing required param: currency.', 'currency', 'parameter_missing');
    if (params.amount === undefined) throw invalid('Missing required param: amount.', 'amount', 'parameter_missing');
    const amount = parseAmount(params.amount, currency);
    // Not writable since API 2026-09-30 (the version the SDK pins).
    if (params.payment_method_types !== undefined) {
      throw invalid('payment_method_types is no longer supported; use allowed_payment_method_types.', 'payment_method_types', 'payment_method_types_no_longer_supported');
    }
    const allowed = params.allowed_payment_method_types;
    const automatic = (params.automatic_payment_methods as Params | undefined)?.enabled === 'true';
    if (allowed !== undefined && automatic) {
      throw invalid('allowed_payment_method_types and automatic_payment_methods cannot be used together.', 'allowed_payment_method_types', 'parameters_exclusive');
    }
    const methodTypes = allowed && typeof allowed === 'object' ? Object.values(allowed as Record<string, string>) : DASHBOARD_METHODS;
    const captureMethod = params.capture_method ?? 'automatic_async';
    if (captureMethod !== 'automatic' && captureMethod !== 'automatic_async' && captureMethod !== 'manual') {
      throw invalid(`Invalid capture_method: must be one of automatic, automatic_async, or manual`, 'capture_method', 'parameter_invalid_string');
    }
    const id = this.newId('pi');
    const intent: StripeIntent = {
      id,
      object: 'payment_intent',
      amount,
      amount_received: 0,
      capture_method: captureMethod,
      amount_capturable: 0,
      cancellation_reason: null,
      currency,
      status: 'requires_payment_method',
      client_secret: `${id}_secret_${randomBytes(12).toString('hex')}`,
      description: typeof params.description === 'string' ? params.description : null,
      receipt_email: typeof params.receipt_email === 'string' ? params.receipt_email : null,
      metadata: { ...((params.metadata as Record<string, string>) ?? {}) },
      latest_charge: null,
      payment_method: null,
      payment_method_types: [...methodTypes],
      last_payment_error: null,
      created: Math.floor(Date.now() / 1000),
      livemode: false,
      customer: null,
      setup_future_usage: null,
    };
    this.customers.applyToIntent(intent, params, true);
    this.intents.set(id, intent);
    return structuredClone(intent);
  }

  retrieve(id: string): StripeIntent {
    const intent = this.intents.get(id);
    if (!intent) {
      throw new StripeApiError(404, 'invalid_request_error', 'resource_missing', `No such payment_intent: '${id}'`, 'intent');
    }
    return structuredClone(intent);
  }

  update(id: string, params: Params): StripeIntent {
    const intent = this.intents.get(id);
    if (!intent) this.retrieve(id);
    const target = intent as StripeIntent;
    if (params.amount !== undefined) {
      if (!UPDATABLE.includes(target.status)) {
        throw new StripeApiError(
          400,
          'invalid_request_error',
          'payment_intent_unexpected_state',
          `This PaymentIntent's amount could not be updated because it has a status of ${target.status}.`,
        );
      }
      target.amount = parseAmount(params.amount, target.currency);
    }
    if (params.metadata && typeof params.metadata === 'object') {
      for (const [key, value] of Object.entries(params.metadata as Record<string, string>)) {
        if (value === '') delete target.metadata[key];
        else target.metadata[key] = value;
      }
    }
    if (typeof params.description === 'string') target.description = params.description;
    if (typeof params.receipt_email === 'string') target.receipt_email = params.receipt_email;
    this.customers.applyToIntent(target, params, false);
    return structuredClone(target);
  }

  /**
   * POST /v1/payment_intents/<id>/confirm with a test payment method, as
   * Stripe.js sends it from the customer's browser. A declined card leaves the
   * intent in requires_payment_method with `last_payment_error`, and Stripe
   * answers 402 `card_error` carrying the intent; either way an event follows.
   */
  confirm(id: string, params: Params, onOutcome?: (outcome: ConfirmOutcome) => void): StripeIntent {
    const intent = this.intents.get(id);
    if (!intent) this.retrieve(id);
    const target = intent as StripeIntent;
    if (!['requires_payment_method', 'requires_confirmation', 'requires_action'].includes(target.status)) {
      throw new StripeApiError(
        400,
        'invalid_request_error',
        'payment_intent_unexpected_state',
        `You cannot confirm this PaymentIntent because it has a status of ${target.status}.`,
        undefined,
        { payment_intent: structuredClone(target) },
      );
    }
    const methodId = typeof params.payment_method === 'string' ? params.payment_method : '';
    if (!methodId) {
      throw invalid('You must provide a payment_method to confirm this PaymentIntent.', 'payment_method', 'parameter_missing');
    }
    const method: (typeof TEST_PAYMENT_METHODS)[string] | undefined = TEST_PAYMENT_METHODS[methodId] ?? this.customers.savedCard(methodId, target.customer);
    if (!method) {
      throw new StripeApiError(400, 'invalid_request_error', 'resource_missing', `No such PaymentMethod: '${methodId}'`, 'payment_method');
    }
    target.payment_method = methodId;
    const charge = this.newId('ch');
    target.latest_charge = charge;
    if (method.decline) {
      target.status = 'requires_payment_method';
      target.last_payment_error = {
        type: 'card_error',
        ...method.decline,
        charge,
        payment_method: { id: methodId, object: 'payment_method', type: 'card' },
      };
      const declined = structuredClone(target);
      const failedEvent = this.events.record('payment_intent.payment_failed', target);
      onOutcome?.({ type: 'payment_intent.payment_failed', intent: declined, eventId: failedEvent.id });
      throw new StripeApiError(402, 'card_error', method.decline.code, method.decline.message, undefined, {
        decline_code: method.decline.decline_code,
        charge,
        payment_intent: declined,
      });
    }
    this.customers.attachFromIntent(target, method);
    if (target.capture_method === 'manual') {
      this.holdAuthorization(target, onOutcome);
      return structuredClone(target);
    }
    target.status = 'succeeded';
    target.amount_received = target.amount;
    target.last_payment_error = null;
    this.recordCharge(target, { captured: true });
    const paid = structuredClone(target);
    const paidEvent = this.events.record('payment_intent.succeeded', target);
    onOutcome?.({ type: 'payment_intent.succeeded', intent: paid, eventId: paidEvent.id });
    return paid;
  }

  /** Whether `clientSecret` is the intent's own (what a publishable-key call must prove). */
  clientSecretMatches(id: string, clientSecret: unknown): boolean {
    const intent = this.intents.get(id);
    return Boolean(intent) && typeof clientSecret === 'string' && intent?.client_secret === clientSecret;
  }

  /** What a customer's successful payment does (used by demo helpers and tests). */
  succeed(id: string): StripeIntent {
    const intent = this.intents.get(id);
    if (!intent) return this.retrieve(id);
    intent.status = 'succeeded';
    intent.amount_received = intent.amount;
    intent.latest_charge = this.newId('ch');
    // Stripe clears the previous attempt's error once a payment succeeds.
    intent.last_payment_error = null;
    this.recordCharge(intent, { captured: true });
    this.events.record('payment_intent.succeeded', intent);
    return structuredClone(intent);
  }

  /** A successful confirmation of a manual-capture intent: the amount is held on the card, not collected. */
  private holdAuthorization(intent: StripeIntent, onOutcome?: (outcome: ConfirmOutcome) => void): void {
    intent.status = 'requires_capture';
    intent.amount_capturable = intent.amount;
    intent.last_payment_error = null;
    this.recordCharge(intent, { captured: false });
    const event = this.events.record('payment_intent.amount_capturable_updated', intent);
    onOutcome?.({ type: 'payment_intent.amount_capturable_updated', intent: structuredClone(intent), eventId: event.id });
  }

  /** What a customer's successful payment does to a manual-capture intent: authorized, `requires_capture`. */
  authorize(id: string): StripeIntent {
    const intent = this.intents.get(id);
    if (!intent) return this.retrieve(id);
    intent.latest_charge = this.newId('ch');
    this.holdAuthorization(intent);
    return structuredClone(intent);
  }

  /**
   * POST /v1/payment_intents/<id>/capture: only a `requires_capture` intent; `amount_to_capture` at most
   * what is capturable (the rest is released). Records `payment_intent.succeeded`.
   */
  capture(id: string, params: Params, onOutcome?: (outcome: ConfirmOutcome) => void): StripeIntent {
    const target = this.intents.get(id) ?? this.retrieve(id);
    if (target.status !== 'requires_capture') {
      throw new StripeApiError(
        400,
        'invalid_request_error',
        'payment_intent_unexpected_state',
        `This PaymentIntent could not be captured because it has a status of ${target.status}. Only a PaymentIntent with one of the following statuses may be captured: requires_capture.`,
      );
    }
    const amount = params.amount_to_capture === undefined ? target.amount_capturable : parseAmount(params.amount_to_capture, target.currency);
    if (amount > target.amount_capturable) {
      throw invalid(`The amount_to_capture (${amount}) cannot be more than the amount_capturable (${target.amount_capturable}).`, 'amount_to_capture', 'amount_too_large');
    }
    const charge = target.latest_charge ? this.charges.get(target.latest_charge) : undefined;
    // Stripe refuses a capture after `capture_before`: the authorization lapsed (Stripe then cancels the intent).
    if (charge?.capture_before !== undefined && Math.floor(Date.now() / 1000) >= charge.capture_before) {
      throw new StripeApiError(400, 'invalid_request_error', 'charge_expired_for_capture', `Charge ${charge.id} has expired for capture.`);
    }
    target.status = 'succeeded';
    target.amount_received = amount;
    target.amount_capturable = 0;
    if (charge) Object.assign(charge, { captured: true, amount_captured: amount });
    const event = this.events.record('payment_intent.succeeded', target);
    onOutcome?.({ type: 'payment_intent.succeeded', intent: structuredClone(target), eventId: event.id });
    return structuredClone(target);
  }

  /** POST /v1/payment_intents/<id>/cancel: not once succeeded or canceled. Records `payment_intent.canceled`. */
  cancel(id: string, params: Params): StripeIntent {
    const target = this.intents.get(id) ?? this.retrieve(id);
    if (target.status === 'succeeded' || target.status === 'canceled') {
      throw new StripeApiError(
        400,
        'invalid_request_error',
        'payment_intent_unexpected_state',
        `You cannot cancel this PaymentIntent because it has a status of ${target.status}.`,
      );
    }
    return this.cancelAs(target, typeof params.cancellation_reason === 'string' ? params.cancellation_reason : null);
  }

  /** Stripe's cancel, by request or its own: an authorized charge is refunded whole (released); records `payment_intent.canceled`. */
  private cancelAs(target: StripeIntent, reason: string | null): StripeIntent {
    const charge = target.latest_charge ? this.charges.get(target.latest_charge) : undefined;
    if (charge && !charge.captured) Object.assign(charge, { amount_refunded: charge.amount, refunded: true });
    target.status = 'canceled';
    target.amount_capturable = 0;
    target.cancellation_reason = reason;
    this.events.record('payment_intent.canceled', target);
    return structuredClone(target);
  }

  /**
   * Stripe cancels an authorization nobody captured by its `capture_before` (the funds are released).
   * `cancellation_reason` is one Stripe generates itself (`automatic` or `expired`, not a user-provided one).
   */
  lapseAuthorization(id: string, reason: 'automatic' | 'expired' = 'automatic'): StripeEvent {
    const target = this.intents.get(id) ?? this.retrieve(id);
    if (target.status !== 'requires_capture') throw new Error(`${id} holds no authorization (${target.status})`);
    this.cancelAs(target, reason);
    return this.events.events.at(-1)!;
  }

  /**
   * A payment made before the stand-in started (seed data): a succeeded intent with its charge,
   * created at `created` (Unix seconds). The event log holds what happened since the stand-in
   * started, so no event is recorded for it.
   */
  seedSucceeded(params: Params, created: number): StripeIntent {
    const { id } = this.create(params);
    const intent = this.intents.get(id) as StripeIntent;
    Object.assign(intent, { status: 'succeeded', amount_received: intent.amount, latest_charge: this.newId('ch'), created });
    this.recordCharge(intent, { captured: true, created });
    return structuredClone(intent);
  }

  /** What a declined card does: the intent goes back to requires_payment_method with an error. */
  fail(id: string, message = 'Your card was declined.'): StripeIntent {
    const intent = this.intents.get(id);
    if (!intent) return this.retrieve(id);
    intent.status = 'requires_payment_method';
    intent.last_payment_error = { message, code: 'card_declined' };
    this.events.record('payment_intent.payment_failed', intent);
    return structuredClone(intent);
  }

  /** Charges by id (one per succeeded intent), refunds and disputes: what the lifecycle events carry. */
  readonly charges = new Map<string, StripeChargeRecord>();
  readonly refunds = new Map<string, StripeObject & { charge: string; amount: number; status: string; created: number; metadata: Record<string, string> }>();
  readonly disputes = new Map<string, StripeObject & { charge: string; status: string }>();
  /** Radar reviews (`prv_…`), open until closed. */
  readonly reviews = new Map<string, StripeObject & { charge: string; open: boolean; reason: string; closed_reason: string | null }>();

  /** The intent's charge: captured, or (Radar reviews a payment as soon as it is authorized) only authorized. */
  private chargeOf(intentId: string, accept: 'captured' | 'authorized' = 'captured') {
    const intent = this.retrieve(intentId);
    const charged = intent.status === 'succeeded' || (accept === 'authorized' && intent.status === 'requires_capture');
    if (!intent.latest_charge || !charged) {
      throw new StripeApiError(400, 'invalid_request_error', 'charge_not_refundable', `PaymentIntent ${intentId} has no successful charge.`);
    }
    const charge = this.charges.get(intent.latest_charge) ?? this.recordCharge(this.intents.get(intentId)!, { captured: intent.status === 'succeeded' });
    // What a refund or dispute works on is what was captured.
    if (charge.captured) charge.amount = charge.amount_captured;
    return charge;
  }

  /** The intent's latest charge, made now (an authorization or a payment). Card authorizations last 7 days (`capture_before`). */
  private recordCharge(intent: StripeIntent, how: { captured: boolean; created?: number }): StripeChargeRecord {
    const created = how.created ?? Math.floor(Date.now() / 1000);
    const amount = intent.amount_received || intent.amount;
    const charge: StripeChargeRecord = {
      id: intent.latest_charge as string,
      intent: intent.id,
      amount,
      amount_captured: how.captured ? amount : 0,
      amount_refunded: 0,
      captured: how.captured,
      refunded: false,
      currency: intent.currency,
      created,
      ...(intent.capture_method === 'manual' && !how.captured ? { capture_before: created + AUTHORIZATION_SECONDS } : {}),
    };
    this.charges.set(charge.id, charge);
    return charge;
  }

  /**
   * GET /v1/charges/<id> as Stripe shapes the fields the service reads: `captured`, `amount_captured`,
   * `payment_method_details.card.capture_before` (an uncaptured authorization) and `review` (an id, or
   * the review object with `expand[]=review`).
   */
  retrieveCharge(id: string, expand: string[] = []): StripeObject {
    const charge = this.charges.get(id);
    if (!charge) throw new StripeApiError(404, 'invalid_request_error', 'resource_missing', `No such charge: '${id}'`, 'id');
    const review = [...this.reviews.values()].filter((r) => r.charge === id).at(-1);
    const intent = this.intents.get(charge.intent);
    return {
      id,
      object: 'charge',
      amount: charge.amount,
      amount_captured: charge.amount_captured,
      amount_refunded: charge.amount_refunded,
      captured: charge.captured,
      refunded: charge.refunded || (charge.amount_refunded >= charge.amount && charge.amount > 0),
      currency: charge.currency,
      created: charge.created,
      status: 'succeeded',
      payment_intent: expand.includes('payment_intent') && intent ? structuredClone(intent) : charge.intent,
      review: review ? (expand.includes('review') ? structuredClone(review) : review.id) : null,
      payment_method_details: {
        type: 'card',
        card: { brand: 'visa', last4: '4242', ...(charge.capture_before !== undefined ? { capture_before: charge.capture_before } : {}) },
      },
    };
  }

  /** GET /v1/charges: newest first, filtered by `created` (integer or gt/gte/lt/lte) and `payment_intent`; `expand[]=data.<field>`. */
  listCharges(query: URLSearchParams): { object: 'list'; url: string; has_more: boolean; data: StripeObject[] } {
    const number = (name: string) => (query.get(name) === null ? undefined : Number(query.get(name)));
    const limit = number('limit') ?? 10;
    if (!Number.isInteger(limit) || limit < 1 || limit > 100) throw invalid('Invalid limit: must be between 1 and 100', 'limit');
    const [gt, gte, lt, lte, exactly] = ['created[gt]', 'created[gte]', 'created[lt]', 'created[lte]', 'created'].map(number);
    const intent = query.get('payment_intent');
    let list = [...this.charges.values()]
      .map((charge, index) => ({ charge, index }))
      .sort((a, b) => b.charge.created - a.charge.created || b.index - a.index)
      .map(({ charge }) => charge)
      .filter(
        (c) =>
          (gt === undefined || c.created > gt) &&
          (gte === undefined || c.created >= gte) &&
          (lt === undefined || c.created < lt) &&
          (lte === undefined || c.created <= lte) &&
          (exactly === undefined || c.created === exactly) &&
          (intent === null || c.intent === intent),
      );
    const after = query.get('starting_after');
    if (after) {
      const at = list.findIndex((c) => c.id === after);
      if (at < 0) throw new StripeApiError(400, 'invalid_request_error', 'resource_missing', `No such charge: '${after}'`, 'starting_after');
      list = list.slice(at + 1);
    }
    const expand = [...query.entries()].filter(([key]) => /^expand\[\d*\]$/.test(key)).map(([, value]) => value.replace(/^data\./, ''));
    const data = list.slice(0, limit).map((c) => this.retrieveCharge(c.id, expand));
    return { object: 'list', url: '/v1/charges', has_more: list.length > limit, data };
  }

  /** GET /v1/reviews/<id>. */
  retrieveReview(id: string): StripeObject {
    const review = this.reviews.get(id);
    if (!review) throw new StripeApiError(404, 'invalid_request_error', 'resource_missing', `No such review: '${id}'`, 'id');
    return structuredClone(review);
  }

  /** Moves an authorization back in time: its charge's creation and `capture_before` (tests of the expiry cron). */
  backdateAuthorization(intentId: string, seconds: number): void {
    const charge = this.charges.get(this.intents.get(intentId)?.latest_charge ?? '');
    if (!charge) return;
    charge.created -= seconds;
    if (charge.capture_before !== undefined) charge.capture_before -= seconds;
  }

  /** The charge object of `charge.refunded`: without `refunds`, which API 2022-11-15 and later no longer include. */
  private chargeObject(chargeId: string): StripeObject {
    const charge = this.charges.get(chargeId)!;
    return {
      id: charge.id,
      object: 'charge',
      amount: charge.amount,
      amount_refunded: charge.amount_refunded,
      currency: charge.currency,
      payment_intent: charge.intent,
      refunded: charge.amount_refunded >= charge.amount,
    };
  }

  /** `POST /v1/refunds` as the dashboard makes it: the whole remainder by default; records `charge.refunded`. */
  refund(intentId: string, amount?: number, metadata: Record<string, string> = {}): { refund: StripeObject; event: StripeEvent } {
    const charge = this.chargeOf(intentId);
    const remaining = charge.amount - charge.amount_refunded;
    if (remaining <= 0) {
      throw new StripeApiError(400, 'invalid_request_error', 'charge_already_refunded', `Charge ${charge.id} has already been refunded.`);
    }
    if ([...this.disputes.values()].some((d) => d.charge === charge.id && d.status !== 'won')) {
      throw new StripeApiError(400, 'invalid_request_error', 'charge_disputed', `Charge ${charge.id} has been charged back; cannot issue a refund.`);
    }
    const value = amount ?? remaining;
    if (!Number.isInteger(value) || value < 1 || value > remaining) {
      throw invalid(`Refund amount (${value}) is greater than unrefunded amount on charge (${remaining})`, 'amount', 'amount_too_large');
    }
    // docs.stripe.com/currencies#three-decimal: Refunds too take only amounts whose last digit is 0.
    if (THREE_DECIMAL.has(charge.currency) && value % 10 !== 0) {
      throw invalid('Amounts in this currency must be a multiple of 10', 'amount', 'invalid_amount');
    }
    charge.amount_refunded += value;
    const refund = {
      id: this.newId('re'),
      object: 'refund' as const,
      amount: value,
      currency: charge.currency,
      charge: charge.id,
      payment_intent: charge.intent,
      status: 'succeeded',
      reason: 'requested_by_customer',
      created: Math.floor(Date.now() / 1000),
      metadata: { ...metadata },
    };
    this.refunds.set(refund.id, refund);
    const event = this.events.record('charge.refunded', this.chargeObject(charge.id));
    return { refund: structuredClone(refund), event };
  }

  /**
   * `POST /v1/refunds` as the API takes it: `payment_intent` or `charge`, `amount` (the remainder when
   * absent) and `metadata`. The idempotency key is the handler's (fetch-handler.ts).
   */
  createRefund(params: Params): StripeObject {
    const metadata = { ...((params.metadata as Record<string, string> | undefined) ?? {}) };
    const chargeId = typeof params.charge === 'string' ? params.charge : undefined;
    const intentId = typeof params.payment_intent === 'string' ? params.payment_intent : chargeId ? this.charges.get(chargeId)?.intent : undefined;
    if (!intentId) {
      if (chargeId) throw new StripeApiError(404, 'invalid_request_error', 'resource_missing', `No such charge: '${chargeId}'`, 'charge');
      throw invalid('One of the following params should be provided for this request: payment_intent or charge.', 'payment_intent', 'parameter_missing');
    }
    const amount = params.amount === undefined ? undefined : Number(params.amount);
    if (amount !== undefined && !/^\d+$/.test(String(params.amount))) throw invalid('Invalid integer: amount', 'amount');
    return this.refund(intentId, amount, metadata).refund;
  }

  /**
   * `POST /v1/refunds/<id>` with `metadata`: the keys given are set, a key given empty is removed,
   * the others stay (Stripe's metadata update); records `refund.updated`, as Stripe does for any update.
   */
  updateRefundMetadata(refundId: string, params: Params): StripeObject {
    const refund = this.refunds.get(refundId);
    if (!refund) throw new StripeApiError(404, 'invalid_request_error', 'resource_missing', `No such refund: '${refundId}'`, 'id');
    for (const [key, value] of Object.entries((params.metadata as Record<string, string> | undefined) ?? {})) {
      if (value === '') delete refund.metadata[key];
      else refund.metadata[key] = String(value);
    }
    this.events.record('refund.updated', structuredClone(refund));
    return structuredClone(refund);
  }

  /** A refund that later fails or is canceled (bank debits): records `charge.refund.updated`. */
  updateRefund(refundId: string, status: 'failed' | 'canceled'): StripeEvent {
    const refund = this.refunds.get(refundId);
    if (!refund) throw new StripeApiError(404, 'invalid_request_error', 'resource_missing', `No such refund: '${refundId}'`, 'id');
    refund.status = status;
    const charge = this.charges.get(refund.charge)!;
    charge.amount_refunded -= refund.amount;
    return this.events.record('charge.refund.updated', structuredClone(refund));
  }

  /** Moves an intent's creation back in time (tests of the authorization expiry). */
  backdate(id: string, seconds: number): void {
    const intent = this.intents.get(id);
    if (intent) intent.created -= seconds;
  }

  /** `GET /v1/refunds?charge=…`: newest first, `limit` and `starting_after` as Stripe pages. */
  listRefunds(query: URLSearchParams): { object: 'list'; url: string; has_more: boolean; data: StripeObject[] } {
    const chargeId = query.get('charge');
    const limit = Number(query.get('limit') ?? '10');
    let list = [...this.refunds.values()].filter((r) => chargeId === null || r.charge === chargeId).reverse();
    const after = query.get('starting_after');
    if (after) list = list.slice(list.findIndex((r) => r.id === after) + 1);
    return { object: 'list', url: '/v1/refunds', has_more: list.length > limit, data: structuredClone(list.slice(0, limit)) };
  }

  private disputeEvent(type: string, disputeId: string): StripeEvent {
    return this.events.record(type, structuredClone(this.disputes.get(disputeId)!));
  }

  /** A cardholder's chargeback: records `charge.dispute.created` (status `needs_response`). */
  dispute(intentId: string, reason = 'fraudulent'): { dispute: StripeObject; event: StripeEvent } {
    const charge = this.chargeOf(intentId);
    const dispute = {
      id: this.newId('dp'),
      object: 'dispute' as const,
      amount: charge.amount,
      currency: charge.currency,
      charge: charge.id,
      payment_intent: charge.intent,
      reason,
      status: 'needs_response',
    };
    this.disputes.set(dispute.id, dispute);
    return { dispute: structuredClone(dispute), event: this.disputeEvent('charge.dispute.created', dispute.id) };
  }

  /** The dispute's outcome: records `charge.dispute.closed` with status `won` or `lost`. */
  closeDispute(disputeId: string, status: 'won' | 'lost'): StripeEvent {
    const dispute = this.disputes.get(disputeId);
    if (!dispute) throw new StripeApiError(404, 'invalid_request_error', 'resource_missing', `No such dispute: '${disputeId}'`, 'dispute');
    dispute.status = status;
    return this.disputeEvent('charge.dispute.closed', disputeId);
  }

  /** Money moving because of a dispute: `charge.dispute.funds_withdrawn` or `charge.dispute.funds_reinstated`. */
  disputeFunds(disputeId: string, movement: 'withdrawn' | 'reinstated'): StripeEvent {
    if (!this.disputes.has(disputeId)) throw new StripeApiError(404, 'invalid_request_error', 'resource_missing', `No such dispute: '${disputeId}'`, 'dispute');
    return this.disputeEvent(`charge.dispute.funds_${movement}`, disputeId);
  }

  /**
   * Radar holds the payment for review: records `review.opened` (`opened_reason` `rule`, or `manual`
   * when the shop opened it in the dashboard), as Stripe shapes the review object.
   */
  openReview(intentId: string, openedReason: 'rule' | 'manual' = 'rule'): { review: StripeObject; event: StripeEvent } {
    const charge = this.chargeOf(intentId, 'authorized');
    const review = {
      id: this.newId('prv'),
      object: 'review' as const,
      charge: charge.id,
      payment_intent: charge.intent,
      open: true,
      opened_reason: openedReason,
      reason: openedReason as string,
      closed_reason: null as string | null,
      created: Math.floor(Date.now() / 1000),
    };
    this.reviews.set(review.id, review);
    return { review: structuredClone(review), event: this.events.record('review.opened', structuredClone(review)) };
  }

  /**
   * The review's end: records `review.closed`. `approved` is the shop's approval; `refunded` and
   * `refunded_as_fraud` follow a refund, `disputed` a dispute (Stripe closes the review itself then).
   */
  closeReview(reviewId: string, closedReason: string): StripeEvent {
    const review = this.reviews.get(reviewId);
    if (!review) throw new StripeApiError(404, 'invalid_request_error', 'resource_missing', `No such review: '${reviewId}'`, 'review');
    if (!review.open) throw new StripeApiError(400, 'invalid_request_error', undefined, `This review is already closed.`);
    Object.assign(review, { open: false, reason: closedReason, closed_reason: closedReason });
    return this.events.record('review.closed', structuredClone(review));
  }

  /** The card issuer reports the charge as fraud: records `radar.early_fraud_warning.created`. */
  earlyFraudWarning(intentId: string, fraudType = 'made_with_stolen_card'): { warning: StripeObject; event: StripeEvent } {
    const charge = this.chargeOf(intentId);
    const disputed = [...this.disputes.values()].some((d) => d.charge === charge.id);
    const warning = {
      id: this.newId('issfr'),
      object: 'radar.early_fraud_warning' as const,
      // Stripe's meaning: no dispute yet and not fully refunded, so a refund can still prevent one.
      actionable: !disputed && charge.amount_refunded < charge.amount,
      charge: charge.id,
      payment_intent: charge.intent,
      fraud_type: fraudType,
      created: Math.floor(Date.now() / 1000),
      livemode: false,
    };
    return { warning: structuredClone(warning), event: this.events.record('radar.early_fraud_warning.created', structuredClone(warning)) };
  }

  /** A delayed method (a bank debit) submitted: the intent is `processing`; records `payment_intent.processing`. */
  process(id: string): StripeIntent {
    const intent = this.intents.get(id);
    if (!intent) return this.retrieve(id);
    intent.status = 'processing';
    this.events.record('payment_intent.processing', intent);
    return structuredClone(intent);
  }

  setStatus(id: string, status: StripeIntent['status']): void {
    const intent = this.intents.get(id);
    if (intent) intent.status = status;
  }
}
