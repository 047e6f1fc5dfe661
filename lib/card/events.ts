/**
 * Stripe's events in the service's own shape (docs/contract.md#spec-2-3), for the webhook and
 * reconciliation alike: only the fields a handler needs are read, nothing else trusted or kept.
 */
import { z } from 'zod';
import { InvalidCardEventError } from '@/lib/errors';
import { parseOrderId } from '@/lib/order-id';

export const UNKNOWN_PAYMENT_ERROR = 'Unknown error';

export interface CardEventEnvelope {
  id: string;
  type: string;
  created: number;
  object: Record<string, unknown>;
}

export interface PaymentIntentFacts {
  intentId: string;
  /** `amount_received` once succeeded. */
  amount: number | undefined;
  currency: string | undefined;
  orderId: number | undefined;
  chargeId: string;
  errorMessage: string;
  paymentMethodType: string | undefined;
  cancellationReason: string | undefined;
}

/** What links a charge-level object (charge, refund, dispute) to its order: the intent, never the object's own fields. */
export interface IntentLink {
  intentId: string | undefined;
  orderId: number | undefined;
}

export interface RefundFacts {
  refundId: string;
  amount: number;
  currency: string;
  status: string;
  reason: string | undefined;
  /** Set when the service made it from the store's admin; undefined for a refund made at Stripe. */
  storeRefundId: number | undefined;
  created: number | undefined;
}

export interface ChargeFacts extends IntentLink {
  chargeId: string;
}

export type RefundEventFacts = IntentLink & RefundFacts;

export interface ReviewFacts extends IntentLink {
  reviewId: string;
  chargeId: string;
  open: boolean;
  openedReason: string;
  closedReason: string | undefined;
}

export interface FraudWarningFacts extends IntentLink {
  warningId: string;
  chargeId: string;
  fraudType: string;
  /** Not yet disputed nor fully refunded: a refund now can still prevent a dispute. */
  actionable: boolean;
}

export interface DisputeFacts extends IntentLink {
  disputeId: string;
  chargeId: string;
  amount: number;
  currency: string;
  status: string;
  reason: string;
}

interface EventBase {
  id: string;
  type: string;
  created: number;
}

export const PAYMENT_INTENT_EVENTS = [
  'payment_intent.succeeded',
  'payment_intent.payment_failed',
  'payment_intent.processing',
  'payment_intent.amount_capturable_updated',
  'payment_intent.canceled',
] as const;
export const CHARGE_EVENTS = ['charge.refunded'] as const;
/** Stripe sends `charge.refund.updated` for some payment methods only, `refund.updated` for every refund (2024-10-28). */
export const REFUND_EVENTS = ['charge.refund.updated', 'refund.updated'] as const;
export const DISPUTE_EVENTS = [
  'charge.dispute.created',
  'charge.dispute.closed',
  'charge.dispute.funds_withdrawn',
  'charge.dispute.funds_reinstated',
] as const;

export const REVIEW_EVENTS = ['review.opened', 'review.closed'] as const;
export const FRAUD_WARNING_EVENTS = ['radar.early_fraud_warning.created'] as const;

export type CardEvent = EventBase &
  (
    | { kind: 'payment_intent'; intent: PaymentIntentFacts }
    | { kind: 'charge'; charge: ChargeFacts }
    | { kind: 'refund'; refund: RefundEventFacts }
    | { kind: 'dispute'; dispute: DisputeFacts }
    | { kind: 'review'; review: ReviewFacts }
    | { kind: 'fraud_warning'; warning: FraudWarningFacts }
    /** A type the service reads whose object is not what it should be: 400 when the type is handled. */
    | { kind: 'unreadable'; problem: string }
    | { kind: 'other' }
  );

export type CardEventKind = CardEvent['kind'];
export type CardEventOf<K extends CardEventKind> = Extract<CardEvent, { kind: K }>;

export interface CardEventQuery {
  types: readonly string[];
  createdFrom: number;
  startingAfter?: string | undefined;
  limit: number;
}

export interface CardEventPage {
  events: CardEvent[];
  hasMore: boolean;
}

const eventSchema = z.object({
  id: z.string().min(1).max(255),
  type: z.string().min(1).max(255),
  created: z.number().int().nonnegative().optional(),
  data: z.object({ object: z.record(z.string(), z.unknown()) }),
});

const id = z.string().min(1).max(255);
const MAX_LABEL = 50;
const minor = z.number().int().nonnegative();
const currency = z.string().length(3).transform((v) => v.toLowerCase());
const expandable = z.union([id, z.looseObject({ id })]).nullish();

const intentSchema = z.object({
  id,
  amount: minor.optional(),
  amount_received: minor.optional(),
  status: z.string().optional(),
  capture_method: z.string().optional(),
  currency: z.string().min(3).max(3).optional(),
  metadata: z.record(z.string(), z.unknown()).nullish(),
  latest_charge: z.unknown().optional(),
  last_payment_error: z.unknown().optional(),
  payment_method: z.unknown().optional(),
  payment_method_types: z.array(z.string()).optional(),
});

const refundSchema = z.object({
  id,
  amount: minor,
  created: z.number().int().nullish(),
  currency,
  status: z.string().nullish(),
  reason: z.string().nullish(),
  payment_intent: expandable,
  metadata: z.record(z.string(), z.unknown()).nullish(),
});

const chargeSchema = z.object({
  id,
  payment_intent: expandable,
});

const disputeSchema = z.object({
  id,
  amount: minor,
  currency,
  status: z.string().min(1),
  reason: z.string().nullish(),
  charge: z.union([id, z.looseObject({ id })]),
  payment_intent: expandable,
});

// A word Stripe adds later still reads (as `other`) rather than making the event unreadable, and nothing
// but a short lower-case word reaches a note.
const label = z.string().max(255).transform((v) => (new RegExp(`^[a-z0-9_]{1,${MAX_LABEL}}$`).test(v) ? v : 'other'));
const chargeRef = z.union([id, z.looseObject({ id })]).nullish();

const reviewSchema = z.object({
  id,
  open: z.boolean(),
  opened_reason: label.nullish(),
  closed_reason: label.nullish(),
  charge: chargeRef,
  payment_intent: expandable,
});

const fraudWarningSchema = z.object({
  id,
  actionable: z.boolean(),
  fraud_type: label.nullish(),
  charge: z.union([id, z.looseObject({ id })]),
  payment_intent: expandable,
});

const MAX_ERROR_MESSAGE = 500;
const MAX_TYPE = 50;

export function readCardEvent(parsed: unknown): CardEventEnvelope {
  const result = eventSchema.safeParse(parsed);
  if (!result.success) throw new InvalidCardEventError('Webhook Error: payload is not an event');
  return { id: result.data.id, type: result.data.type, created: result.data.created ?? 0, object: result.data.data.object };
}

/** Metadata can be edited in Stripe's dashboard: `0042` still names 42. */
function storeId(raw: unknown): number | undefined {
  return parseOrderId(raw, 'zero_padded');
}

/** docs/contract.md#spec-4-3 step 1: a decimal integer above 0, else undefined ("missing or 0" both mean no order). */
export function shopOrderId(metadata: Record<string, unknown> | null | undefined): number | undefined {
  return storeId(metadata?.shop_order_id);
}

/** docs/contract.md#spec-4-3 step 4: `latest_charge` when a string, its `id` when an object, else an empty string. */
export function chargeIdOf(latestCharge: unknown): string {
  if (typeof latestCharge === 'string') return latestCharge;
  if (latestCharge !== null && typeof latestCharge === 'object') {
    const value = (latestCharge as { id?: unknown }).id;
    if (typeof value === 'string') return value;
  }
  return '';
}

export function paymentErrorMessageOf(lastPaymentError: unknown): string {
  if (lastPaymentError === null || typeof lastPaymentError !== 'object') return UNKNOWN_PAYMENT_ERROR;
  const message = (lastPaymentError as { message?: unknown }).message;
  if (typeof message !== 'string' || message.trim() === '') return UNKNOWN_PAYMENT_ERROR;
  return message.trim().slice(0, MAX_ERROR_MESSAGE);
}

function typeField(value: unknown, path: readonly string[]): string | undefined {
  let current: unknown = value;
  for (const key of path) {
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as Record<string, unknown>)[key];
  }
  return typeof current === 'string' && /^[a-z0-9_]{1,50}$/.test(current) ? current.slice(0, MAX_TYPE) : undefined;
}

export function readPaymentIntent(object: Record<string, unknown>): PaymentIntentFacts {
  const result = intentSchema.safeParse(object);
  if (!result.success) throw new InvalidCardEventError('Webhook Error: event does not carry a payment intent');
  const intent = result.data;
  const allowed = intent.payment_method_types?.length === 1 ? typeField(intent.payment_method_types, ['0']) : undefined;
  // A manual capture of less than was authorized leaves `amount` at the authorization (docs/decisions.md#d23).
  const capturedLater = intent.capture_method === 'manual' && intent.status === 'succeeded';
  const received = capturedLater && intent.amount_received ? intent.amount_received : undefined;
  return {
    intentId: intent.id,
    amount: received ?? intent.amount,
    currency: intent.currency?.toLowerCase(),
    orderId: shopOrderId(intent.metadata),
    chargeId: chargeIdOf(intent.latest_charge),
    errorMessage: paymentErrorMessageOf(intent.last_payment_error),
    paymentMethodType:
      typeField(intent.latest_charge, ['payment_method_details', 'type']) ?? typeField(intent.payment_method, ['type']) ?? allowed,
    cancellationReason: typeField(object, ['cancellation_reason']),
  };
}

function intentLinkOf(value: z.infer<typeof expandable>): IntentLink {
  if (value === null || value === undefined) return { intentId: undefined, orderId: undefined };
  if (typeof value === 'string') return { intentId: value, orderId: undefined };
  return { intentId: value.id, orderId: shopOrderId(value.metadata as Record<string, unknown> | undefined) };
}

function refundFacts(refund: z.infer<typeof refundSchema>): RefundFacts {
  return {
    refundId: refund.id,
    amount: refund.amount,
    currency: refund.currency,
    status: refund.status ?? 'succeeded',
    reason: refund.reason ?? undefined,
    storeRefundId: storeId(refund.metadata?.shop_refund_id),
    created: refund.created ?? undefined,
  };
}

export function readRefund(object: unknown): RefundFacts | undefined {
  const result = refundSchema.safeParse(object);
  return result.success ? refundFacts(result.data) : undefined;
}

function readObject(envelope: CardEventEnvelope): CardEvent {
  const base = { id: envelope.id, type: envelope.type, created: envelope.created };
  const { type, object } = envelope;
  if ((PAYMENT_INTENT_EVENTS as readonly string[]).includes(type)) {
    try {
      return { ...base, kind: 'payment_intent', intent: readPaymentIntent(object) };
    } catch (error) {
      if (error instanceof InvalidCardEventError) return { ...base, kind: 'unreadable', problem: error.message };
      throw error;
    }
  }
  if ((CHARGE_EVENTS as readonly string[]).includes(type)) {
    const result = chargeSchema.safeParse(object);
    if (!result.success) return { ...base, kind: 'unreadable', problem: 'Webhook Error: event does not carry a charge' };
    const charge = result.data;
    // Its `refunds` list is not read: API 2022-11-15 and later leave it out, and a snapshot may be stale.
    return {
      ...base,
      kind: 'charge',
      charge: { chargeId: charge.id, ...intentLinkOf(charge.payment_intent) },
    };
  }
  if ((REFUND_EVENTS as readonly string[]).includes(type)) {
    const result = refundSchema.safeParse(object);
    if (!result.success) return { ...base, kind: 'unreadable', problem: 'Webhook Error: event does not carry a refund' };
    return {
      ...base,
      kind: 'refund',
      refund: { ...refundFacts(result.data), ...intentLinkOf(result.data.payment_intent) },
    };
  }
  if ((DISPUTE_EVENTS as readonly string[]).includes(type)) {
    const result = disputeSchema.safeParse(object);
    if (!result.success) return { ...base, kind: 'unreadable', problem: 'Webhook Error: event does not carry a dispute' };
    const dispute = result.data;
    return {
      ...base,
      kind: 'dispute',
      dispute: {
        disputeId: dispute.id,
        chargeId: typeof dispute.charge === 'string' ? dispute.charge : dispute.charge.id,
        amount: dispute.amount,
        currency: dispute.currency,
        status: dispute.status,
        reason: dispute.reason ?? 'general',
        ...intentLinkOf(dispute.payment_intent),
      },
    };
  }
  if ((REVIEW_EVENTS as readonly string[]).includes(type)) {
    const result = reviewSchema.safeParse(object);
    if (!result.success) return { ...base, kind: 'unreadable', problem: 'Webhook Error: event does not carry a review' };
    const review = result.data;
    return {
      ...base,
      kind: 'review',
      review: {
        reviewId: review.id,
        chargeId: chargeIdOf(review.charge),
        open: review.open,
        openedReason: review.opened_reason ?? 'rule',
        closedReason: review.closed_reason ?? undefined,
        ...intentLinkOf(review.payment_intent),
      },
    };
  }
  if ((FRAUD_WARNING_EVENTS as readonly string[]).includes(type)) {
    const result = fraudWarningSchema.safeParse(object);
    if (!result.success) return { ...base, kind: 'unreadable', problem: 'Webhook Error: event does not carry an early fraud warning' };
    const warning = result.data;
    return {
      ...base,
      kind: 'fraud_warning',
      warning: {
        warningId: warning.id,
        chargeId: chargeIdOf(warning.charge),
        fraudType: warning.fraud_type ?? 'misc',
        actionable: warning.actionable,
        ...intentLinkOf(warning.payment_intent),
      },
    };
  }
  return { ...base, kind: 'other' };
}

/** Never throws for its object: a malformed one is `unreadable`, refused only when its type is handled. */
export function toCardEvent(envelope: CardEventEnvelope): CardEvent {
  return readObject(envelope);
}
