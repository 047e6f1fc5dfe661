/**
 * Stripe's events in the service's own shape (docs/contract.md#spec-2-3), for the webhook and reconciliation alike:
 * only the fields a handler needs are read. Which types are handled, and how, is lib/card-payments/apply-event.ts's table.
 */
import { z } from 'zod';
import { InvalidCardEventError } from '@/lib/errors';
import { parseOrderId } from '@/lib/order-id';

/** A short lower-case word: all of a Stripe type or label that reaches a note or a log. */
const WORD = /^[a-z0-9_]{1,50}$/;

export interface CardEventQuery {
  types: readonly string[];
  createdFrom: number;
  startingAfter?: string | undefined;
  limit: number;
}

const eventSchema = z.object({
  id: z.string().min(1).max(255),
  type: z.string().min(1).max(255),
  created: z.number().int().nonnegative().optional(),
  data: z.object({ object: z.record(z.string(), z.unknown()) }),
});

const id = z.string().min(1).max(255);
const minor = z.number().int().nonnegative();
const currency = z.string().length(3).transform((v) => v.toLowerCase());
const metadata = z.record(z.string(), z.unknown()).nullish();
const reference = z.union([id, z.looseObject({ id })]);
const expandable = reference.nullish();
// A word Stripe adds later still reads (as `other`) rather than making the event unreadable, and nothing
// but a short lower-case word reaches a note.
const label = z.string().max(255).transform((v) => (WORD.test(v) ? v : 'other'));
/** Every charge-level object (charge, refund, dispute, review, warning) reaches its order through its intent. */
const linked = z.object({ id, payment_intent: expandable });

export function readCardEvent(parsed: unknown) {
  const result = eventSchema.safeParse(parsed);
  if (!result.success) throw new InvalidCardEventError('Webhook Error: payload is not an event');
  return { id: result.data.id, type: result.data.type, created: result.data.created ?? 0, object: result.data.data.object };
}

/** docs/contract.md#spec-4-3 step 1: a decimal integer above 0 (metadata edited in the dashboard: `0042` is 42), else undefined. */
export function shopOrderId(meta: Record<string, unknown> | null | undefined): number | undefined {
  return parseOrderId(meta?.shop_order_id, 'zero_padded');
}

/** The value at `path` inside nested objects (or arrays), else undefined. */
function valueAt(value: unknown, path: readonly string[]): unknown {
  let current = value;
  for (const key of path) current = current !== null && typeof current === 'object' ? (current as Record<string, unknown>)[key] : undefined;
  return current;
}

/** docs/contract.md#spec-4-3 step 4: `latest_charge` when a string, its `id` when an object, else an empty string. */
export function chargeIdOf(latestCharge: unknown): string {
  const value = typeof latestCharge === 'string' ? latestCharge : valueAt(latestCharge, ['id']);
  return typeof value === 'string' ? value : '';
}

export function paymentErrorMessageOf(lastPaymentError: unknown): string {
  const message = valueAt(lastPaymentError, ['message']);
  return typeof message === 'string' && message.trim() !== '' ? message.trim().slice(0, 500) : 'Unknown error';
}

function typeField(value: unknown, path: readonly string[]): string | undefined {
  const found = valueAt(value, path);
  return typeof found === 'string' && WORD.test(found) ? found : undefined;
}

/** What links a charge-level object (charge, refund, dispute) to its order: the intent, never the object's own fields. */
function intentLinkOf(value: z.infer<typeof expandable>): { intentId: string | undefined; orderId: number | undefined } {
  const intent = typeof value === 'string' ? { id: value, metadata: undefined } : value;
  return { intentId: intent?.id, orderId: shopOrderId(intent?.metadata as Record<string, unknown> | undefined) };
}

const intentSchema = z
  .object({
    id,
    amount: minor.optional(),
    amount_received: minor.optional(),
    status: z.string().optional(),
    capture_method: z.string().optional(),
    currency: currency.optional(),
    metadata,
    latest_charge: z.unknown().optional(),
    last_payment_error: z.unknown().optional(),
    payment_method: z.unknown().optional(),
    payment_method_types: z.array(z.string()).optional(),
    cancellation_reason: z.unknown().optional(),
  })
  .transform((intent) => {
    const allowed = intent.payment_method_types?.length === 1 ? typeField(intent.payment_method_types, ['0']) : undefined;
    // A manual capture of less than was authorized leaves `amount` at the authorization (docs/decisions.md#d23).
    const capturedLater = intent.capture_method === 'manual' && intent.status === 'succeeded';
    const received = capturedLater && intent.amount_received ? intent.amount_received : undefined;
    return {
      intentId: intent.id,
      amount: received ?? intent.amount,
      currency: intent.currency,
      orderId: shopOrderId(intent.metadata),
      chargeId: chargeIdOf(intent.latest_charge),
      errorMessage: paymentErrorMessageOf(intent.last_payment_error),
      paymentMethodType:
        typeField(intent.latest_charge, ['payment_method_details', 'type']) ?? typeField(intent.payment_method, ['type']) ?? allowed,
      cancellationReason: typeField(intent.cancellation_reason, []),
    };
  });

const refundSchema = linked
  .extend({
    amount: minor,
    created: z.number().int().nullish(),
    currency,
    status: z.string().nullish(),
    reason: z.string().nullish(),
    metadata,
  })
  .transform((refund) => ({
    refundId: refund.id,
    amount: refund.amount,
    currency: refund.currency,
    status: refund.status ?? 'succeeded',
    reason: refund.reason ?? undefined,
    /** Set when the service made it from the store's admin; undefined for a refund made at Stripe. */
    storeRefundId: parseOrderId(refund.metadata?.shop_refund_id, 'zero_padded'),
    created: refund.created ?? undefined,
    ...intentLinkOf(refund.payment_intent),
  }));

// Its `refunds` list is not read: API 2022-11-15 and later leave it out, and a snapshot may be stale.
const chargeSchema = linked.transform((charge) => ({
  chargeId: charge.id,
  ...intentLinkOf(charge.payment_intent),
}));

const disputeSchema = linked
  .extend({
    amount: minor,
    currency,
    status: z.string().min(1),
    reason: z.string().nullish(),
    charge: reference,
  })
  .transform((dispute) => ({
    disputeId: dispute.id,
    chargeId: chargeIdOf(dispute.charge),
    amount: dispute.amount,
    currency: dispute.currency,
    status: dispute.status,
    reason: dispute.reason ?? 'general',
    ...intentLinkOf(dispute.payment_intent),
  }));

const reviewSchema = linked
  .extend({
    open: z.boolean(),
    opened_reason: label.nullish(),
    closed_reason: label.nullish(),
    charge: expandable,
  })
  .transform((review) => ({
    reviewId: review.id,
    chargeId: chargeIdOf(review.charge),
    open: review.open,
    openedReason: review.opened_reason ?? 'rule',
    closedReason: review.closed_reason ?? undefined,
    ...intentLinkOf(review.payment_intent),
  }));

const fraudWarningSchema = linked
  .extend({ actionable: z.boolean(), fraud_type: label.nullish(), charge: reference })
  .transform((warning) => ({
    warningId: warning.id,
    chargeId: chargeIdOf(warning.charge),
    fraudType: warning.fraud_type ?? 'misc',
    /** Not yet disputed nor fully refunded: a refund now can still prevent a dispute. */
    actionable: warning.actionable,
    ...intentLinkOf(warning.payment_intent),
  }));

export type RefundFacts = z.output<typeof refundSchema>;

export function readPaymentIntent(object: Record<string, unknown>) {
  const result = intentSchema.safeParse(object);
  if (!result.success) throw new InvalidCardEventError('Webhook Error: event does not carry a payment intent');
  return result.data;
}

export function readRefund(object: unknown): RefundFacts | undefined {
  const result = refundSchema.safeParse(object);
  return result.success ? result.data : undefined;
}

/** Each object Stripe names in an event type (`charge.dispute` in `charge.dispute.created`): its kind, key, schema and name. */
const OBJECTS = {
  payment_intent: { kind: 'payment_intent', key: 'intent', schema: intentSchema, name: 'a payment intent' },
  charge: { kind: 'charge', key: 'charge', schema: chargeSchema, name: 'a charge' },
  // Stripe sends `charge.refund.updated` for some payment methods only, `refund.updated` for every refund (2024-10-28).
  'charge.refund': { kind: 'refund', key: 'refund', schema: refundSchema, name: 'a refund' },
  refund: { kind: 'refund', key: 'refund', schema: refundSchema, name: 'a refund' },
  'charge.dispute': { kind: 'dispute', key: 'dispute', schema: disputeSchema, name: 'a dispute' },
  review: { kind: 'review', key: 'review', schema: reviewSchema, name: 'a review' },
  'radar.early_fraud_warning': { kind: 'fraud_warning', key: 'warning', schema: fraudWarningSchema, name: 'an early fraud warning' },
} as const;

type Envelope = ReturnType<typeof readCardEvent>;
type Objects = typeof OBJECTS;
/** Each object read under its key (`event.intent`, `event.refund`, …), told apart by its kind. */
type ReadObject = {
  [N in keyof Objects]: { kind: Objects[N]['kind'] } & Record<Objects[N]['key'], z.output<Objects[N]['schema']>>;
}[keyof Objects];

/** `unreadable`: a type the service reads whose object is not what it should be (400 when the type is handled). */
export type CardEvent = Omit<Envelope, 'object'> & (ReadObject | { kind: 'unreadable'; problem: string } | { kind: 'other' });

export type CardEventKind = CardEvent['kind'];
export type CardEventOf<K extends CardEventKind> = Extract<CardEvent, { kind: K }>;

/** The object is what the type names (Stripe's `<object>.<action>`). Never throws: a malformed object is `unreadable`. */
export function toCardEvent(envelope: Envelope): CardEvent {
  const base = { id: envelope.id, type: envelope.type, created: envelope.created };
  const named = /^(.+)\.[^.]+$/.exec(envelope.type)?.[1] ?? '';
  if (!Object.hasOwn(OBJECTS, named)) return { ...base, kind: 'other' };
  const object = OBJECTS[named as keyof typeof OBJECTS];
  const result = object.schema.safeParse(envelope.object);
  if (!result.success) return { ...base, kind: 'unreadable', problem: `Webhook Error: event does not carry ${object.name}` };
  return { ...base, kind: object.kind, [object.key]: result.data } as CardEvent;
}
