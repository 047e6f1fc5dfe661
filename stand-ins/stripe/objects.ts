/**
 * Stripe's objects as the stand-in shapes them (a payment intent, the other
 * objects its events carry, a decline) and Stripe's error answer. The model
 * (model.ts) makes them and the Events API (events.ts) lists them; both import
 * them from here, so neither imports the other's module for a type.
 * Not part of the production bundle.
 */
export interface StripeIntent {
  id: string;
  object: 'payment_intent';
  amount: number;
  amount_received: number;
  currency: string;
  status: 'requires_payment_method' | 'requires_confirmation' | 'requires_action' | 'processing' | 'requires_capture' | 'succeeded' | 'canceled';
  /** `manual`: a successful confirmation authorizes (`requires_capture`) and POST …/capture collects. */
  capture_method: 'automatic' | 'automatic_async' | 'manual';
  /** What a `requires_capture` intent may still capture. */
  amount_capturable: number;
  cancellation_reason: string | null;
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
  /** The Stripe Customer (customers.ts); null when none. */
  customer?: string | null;
  setup_future_usage?: 'on_session' | 'off_session' | null;
}

/** A charge, refund, dispute, Radar review or early fraud warning, as Stripe shapes the fields the service reads (API 2022-11-15 and later). */
export type StripeObject = Record<string, unknown> & { id: string; object: 'charge' | 'refund' | 'dispute' | 'review' | 'radar.early_fraud_warning' };

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
