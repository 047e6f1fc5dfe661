/**
 * An in-memory Stripe PaymentIntents API, shared by the tests' msw handlers
 * and the local HTTP stand-in, so the real `stripe` SDK is what runs against it.
 *
 * Modelled on Stripe's documented behaviour: form-encoded parameters;
 * `Idempotency-Key` replays the first answer for the same parameters and
 * answers 400 `idempotency_error` for other parameters; Stripe-shaped errors;
 * amounts only updatable before the intent is processing, succeeded or canceled.
 * It is not part of the production bundle.
 */
import { randomBytes } from 'node:crypto';
import { StripeEventLog, type StripeEvent } from './stripe-events';

export interface StripeIntent {
  id: string;
  object: 'payment_intent';
  amount: number;
  amount_received: number;
  currency: string;
  status: 'requires_payment_method' | 'requires_confirmation' | 'requires_action' | 'processing' | 'succeeded' | 'canceled';
  client_secret: string;
  description: string | null;
  receipt_email: string | null;
  metadata: Record<string, string>;
  latest_charge: string | null;
  payment_method: string | null;
  /** What the intent may be paid with: `allowed_payment_method_types`, or the dashboard's methods with automatic_payment_methods. */
  payment_method_types: string[];
  last_payment_error: StripePaymentError | null;
  created: number;
  livemode: false;
}

/** A charge, refund or dispute, as Stripe shapes the fields the service reads (API 2022-11-15 and later). */
export type StripeObject = Record<string, unknown> & { id: string; object: 'charge' | 'refund' | 'dispute' };

/** `last_payment_error` of a payment intent, as Stripe fills it after a decline. */
export interface StripePaymentError {
  message: string;
  code?: string;
  type?: string;
  decline_code?: string;
  charge?: string;
  payment_method?: { id: string; object: 'payment_method'; type: 'card' };
}

export class StripeApiError extends Error {
  constructor(
    readonly status: number,
    readonly type: string,
    readonly code: string | undefined,
    message: string,
    readonly param?: string,
    /** More fields of the error object, e.g. a card error's `decline_code` and `payment_intent`. */
    readonly extra: Record<string, unknown> = {},
  ) {
    super(message);
  }

  toJSON(): { error: Record<string, unknown> } {
    return {
      error: {
        type: this.type,
        message: this.message,
        ...(this.code ? { code: this.code } : {}),
        ...(this.param ? { param: this.param } : {}),
        ...this.extra,
      },
    };
  }
}

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
  type: 'payment_intent.succeeded' | 'payment_intent.payment_failed';
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
  /** `payment_intent.succeeded` / `payment_intent.payment_failed`, recorded by succeed() and fail(). */
  readonly events = new StripeEventLog();
  private readonly idempotencyCache = new Map<string, { fingerprint: string; status: number; body: unknown }>();
  private sequence = 0;

  private newId(prefix: string): string {
    this.sequence += 1;
    return `${prefix}_${this.sequence.toString().padStart(6, '0')}${randomBytes(6).toString('hex')}`;
  }

  /**
   * Runs a write with Stripe's idempotency rules: the first answer (success or
   * error) for a key is replayed for the same parameters.
   */
  idempotent<T>(key: string | null, fingerprint: string, run: () => T): { status: number; body: unknown } {
    if (key) {
      const previous = this.idempotencyCache.get(key);
      if (previous) {
        if (previous.fingerprint !== fingerprint) {
          throw new StripeApiError(
            400,
            'idempotency_error',
            'idempotency_key_in_use',
            `Keys for idempotent requests can only be used with the same parameters they were first used with.`,
          );
        }
        return { status: previous.status, body: previous.body };
      }
    }
    let answer: { status: number; body: unknown };
    try {
      answer = { status: 200, body: run() };
    } catch (error) {
      if (!(error instanceof StripeApiError)) throw error;
      answer = { status: error.status, body: error.toJSON() };
    }
    if (key) this.idempotencyCache.set(key, { fingerprint, ...answer });
    return answer;
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
    const id = this.newId('pi');
    const intent: StripeIntent = {
      id,
      object: 'payment_intent',
      amount,
      amount_received: 0,
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
    };
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
    const method = TEST_PAYMENT_METHODS[methodId];
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
    target.status = 'succeeded';
    target.amount_received = target.amount;
    target.last_payment_error = null;
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
    this.events.record('payment_intent.succeeded', intent);
    return structuredClone(intent);
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
  readonly charges = new Map<string, { id: string; intent: string; amount: number; amount_refunded: number; currency: string; created: number }>();
  readonly refunds = new Map<string, StripeObject & { charge: string; amount: number; status: string; created: number }>();
  readonly disputes = new Map<string, StripeObject & { charge: string; status: string }>();

  private chargeOf(intentId: string) {
    const intent = this.retrieve(intentId);
    if (!intent.latest_charge || intent.status !== 'succeeded') {
      throw new StripeApiError(400, 'invalid_request_error', 'charge_not_refundable', `PaymentIntent ${intentId} has no successful charge.`);
    }
    let charge = this.charges.get(intent.latest_charge);
    if (!charge) {
      charge = { id: intent.latest_charge, intent: intent.id, amount: intent.amount, amount_refunded: 0, currency: intent.currency, created: intent.created };
      this.charges.set(charge.id, charge);
    }
    return charge;
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
  refund(intentId: string, amount?: number): { refund: StripeObject; event: StripeEvent } {
    const charge = this.chargeOf(intentId);
    const remaining = charge.amount - charge.amount_refunded;
    const value = amount ?? remaining;
    if (!Number.isInteger(value) || value < 1 || value > remaining) {
      throw invalid(`Refund amount (${value}) is greater than unrefunded amount on charge (${remaining})`, 'amount', 'amount_too_large');
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
    };
    this.refunds.set(refund.id, refund);
    const event = this.events.record('charge.refunded', this.chargeObject(charge.id));
    return { refund: structuredClone(refund), event };
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
