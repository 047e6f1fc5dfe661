/**
 * The card provider's event at the boundary (spec 2.3): the signature header,
 * the verified event's envelope and the payment intent's used fields, read
 * into the service's own types. Nothing else of the event is trusted or kept.
 */
import { z } from 'zod';
import type { CardEvent } from '@/lib/card/events';
import { InvalidSignatureError, ServiceError } from '@/lib/errors';

/** Stripe's own header name first (DECISIONS 1), then the spec's neutral one. */
export const SIGNATURE_HEADERS = ['stripe-signature', 'cardprovider-signature'] as const;

export const UNKNOWN_PAYMENT_ERROR = 'Unknown error';

/** A correctly signed event the service cannot read (answered 400, changes nothing). */
export class InvalidCardEventError extends ServiceError {
  readonly kind = 'invalid_event';
}

export type { CardEvent } from '@/lib/card/events';

export interface PaymentIntentFacts {
  intentId: string;
  /** Minor units, as the provider charged them; undefined only when the provider omitted it. */
  amount: number | undefined;
  /** Lower-case ISO code, as the provider writes it. */
  currency: string | undefined;
  /** The store order id from `metadata.shop_order_id`, or undefined when it is missing, 0 or not an integer. */
  orderId: number | undefined;
  /** `latest_charge` when a string, its `id` when an object, else ''. */
  chargeId: string;
  /** `last_payment_error.message`, or `Unknown error`. */
  errorMessage: string;
}

const eventSchema = z.object({
  id: z.string().min(1).max(255),
  type: z.string().min(1).max(255),
  created: z.number().int().nonnegative().optional(),
  data: z.object({ object: z.record(z.string(), z.unknown()) }),
});

const intentSchema = z.object({
  id: z.string().min(1).max(255),
  amount: z.number().int().nonnegative().optional(),
  currency: z.string().min(3).max(3).optional(),
  metadata: z.record(z.string(), z.unknown()).nullish(),
  latest_charge: z.unknown().optional(),
  last_payment_error: z.unknown().optional(),
});

const ORDER_ID = /^\d{1,15}$/;
const MAX_ERROR_MESSAGE = 500;

/** The signature header's value; InvalidSignatureError('Missing signature') when neither header is present. */
export function signatureFrom(headers: Headers): string {
  for (const name of SIGNATURE_HEADERS) {
    const value = headers.get(name);
    if (value) return value;
  }
  throw new InvalidSignatureError('Missing signature');
}

/** The verified event's envelope; a payload that is JSON but no event is refused. */
export function readCardEvent(parsed: unknown): CardEvent {
  const result = eventSchema.safeParse(parsed);
  if (!result.success) throw new InvalidCardEventError('Webhook Error: payload is not an event');
  return { id: result.data.id, type: result.data.type, created: result.data.created ?? 0, object: result.data.data.object };
}

/** Spec 4.3 step 1: a decimal integer above 0, else undefined ("missing or 0" both mean no order). */
export function shopOrderId(metadata: Record<string, unknown> | null | undefined): number | undefined {
  const raw = metadata?.shop_order_id;
  if (typeof raw !== 'string' || !ORDER_ID.test(raw)) return undefined;
  const id = Number(raw);
  return id > 0 ? id : undefined;
}

/** Spec 4.3 step 4: `latest_charge` when a string, its `id` when an object, else an empty string. */
export function chargeIdOf(latestCharge: unknown): string {
  if (typeof latestCharge === 'string') return latestCharge;
  if (latestCharge !== null && typeof latestCharge === 'object') {
    const id = (latestCharge as { id?: unknown }).id;
    if (typeof id === 'string') return id;
  }
  return '';
}

/** The provider's message for a failed payment, or `Unknown error`. */
export function paymentErrorMessageOf(lastPaymentError: unknown): string {
  if (lastPaymentError === null || typeof lastPaymentError !== 'object') return UNKNOWN_PAYMENT_ERROR;
  const message = (lastPaymentError as { message?: unknown }).message;
  if (typeof message !== 'string' || message.trim() === '') return UNKNOWN_PAYMENT_ERROR;
  return message.trim().slice(0, MAX_ERROR_MESSAGE);
}

/** The payment intent in a `payment_intent.*` event. */
export function readPaymentIntent(object: Record<string, unknown>): PaymentIntentFacts {
  const result = intentSchema.safeParse(object);
  if (!result.success) throw new InvalidCardEventError('Webhook Error: event does not carry a payment intent');
  const intent = result.data;
  return {
    intentId: intent.id,
    amount: intent.amount,
    currency: intent.currency?.toLowerCase(),
    orderId: shopOrderId(intent.metadata),
    chargeId: chargeIdOf(intent.latest_charge),
    errorMessage: paymentErrorMessageOf(intent.last_payment_error),
  };
}
