/**
 * The service's typed errors. Every failure the service knows about is one of
 * these; lib/http/errors.ts turns them into the spec's response bodies
 * (section 7). Messages are written for the caller and never carry a secret,
 * a token, an address or an upstream response body. `details` holds
 * identifiers only and is shown to callers only when NODE_ENV=development.
 */
import type { ZodError } from 'zod';

export type SafeDetails = Record<string, string | number | boolean | null>;

/**
 * Every kind of failure the service knows, the one closed list: an error
 * class's `kind` must be one of these, and lib/http/errors.ts answers each of
 * them for every endpoint family, so a new kind does not compile until it is
 * given its answer. Classes that belong to one module live there
 * (SharedStateUnavailableError in lib/redis/connection.ts, InvalidCardEventError
 * in lib/card/events.ts, ShipStationError in lib/shipping/shipstation.ts,
 * CardEventTooEarlyError in lib/webhooks/card/handler.ts); their kinds are here.
 */
export const ERROR_KINDS = [
  // The caller's request
  'rate_limited',
  'invalid_request',
  'payload_too_large',
  'request_aborted',
  'invalid_origin',
  'invalid_token',
  'invalid_signature',
  'invalid_event',
  'unauthorized',
  // The order's state
  'order_not_payable',
  'order_busy',
  'event_too_early',
  'store_callback_refused',
  // The service and what it depends on
  'not_configured',
  'store',
  'card',
  'shipstation',
  'shared_state_unavailable',
] as const;

export type ErrorKind = (typeof ERROR_KINDS)[number];

export abstract class ServiceError extends Error {
  abstract readonly kind: ErrorKind;
  readonly details: SafeDetails | undefined;

  constructor(message: string, details?: SafeDetails) {
    super(message);
    this.details = details;
  }
}

export interface RateLimitState {
  limit: number;
  remaining: number;
  /** When the current window ends (ms since epoch). */
  resetAt: number;
}

export class RateLimitedError extends ServiceError {
  readonly kind = 'rate_limited';
  constructor(readonly state: RateLimitState) {
    super('Too many requests');
  }
}

export class InvalidRequestError extends ServiceError {
  readonly kind = 'invalid_request';
  constructor(readonly issues: ZodError['issues']) {
    super('Invalid request');
  }
}

export class PayloadTooLargeError extends ServiceError {
  readonly kind = 'payload_too_large';
  constructor() {
    super('Payload too large');
  }
}

/**
 * The request's body did not arrive whole: shorter than its Content-Length, a
 * connection closed mid-body, a malformed chunked encoding. The client's
 * doing, never the service's fault: answered 400 (if anyone is still there to
 * read it) and logged below error level.
 */
export class RequestAbortedError extends ServiceError {
  readonly kind = 'request_aborted';
  constructor(reason: 'stream_error' | 'short_body') {
    super('Request body was not received whole', { reason });
  }
}

export type NotPayableReason = 'Order is already paid' | 'Order status is not pending';

export class OrderNotPayableError extends ServiceError {
  readonly kind = 'order_not_payable';
  constructor(
    readonly orderId: number,
    readonly status: string,
    readonly reason: NotPayableReason,
  ) {
    super(reason);
  }
}

export class InvalidOriginError extends ServiceError {
  readonly kind = 'invalid_origin';
  constructor() {
    super('Request origin is not allowed');
  }
}

export class InvalidTokenError extends ServiceError {
  readonly kind = 'invalid_token';
  constructor(reason: string) {
    super('Checkout token is invalid or expired', { reason });
  }
}

/** `busy`: not sent at all, the cap on concurrent store calls was reached (lib/shared-state/store-slots/store-slots.ts). */
export type StoreFailure = 'not_found' | 'invalid_param' | 'rejected' | 'unavailable' | 'timeout' | 'bad_response' | 'busy';

/** A failed call to the store backend. `code` is WooCommerce's error code (an identifier, never a body). */
export class StoreError extends ServiceError {
  readonly kind = 'store';
  constructor(
    readonly operation: string,
    readonly failure: StoreFailure,
    readonly status: number | undefined,
    readonly code: string | undefined,
  ) {
    super(`Store request failed: ${operation}`, {
      operation,
      failure,
      status: status ?? null,
      code: code ?? null,
    });
  }
}

/** What the storefront may show when the shop is busy; the checkout endpoints answer it with 503 and Retry-After. */
export const SHOP_BUSY_MESSAGE = 'The shop is busy, try again in a few seconds';

/**
 * A store call that was not sent: every slot of STORE_MAX_CONCURRENCY stayed taken
 * through the short wait (lib/shared-state/store-slots/store-slots.ts). A store failure like the others
 * (the card webhook answers 400 so Stripe redelivers, the shipping webhook queues
 * the update for the replay), except that nothing reached the store, so it is
 * always safe to try again, and the crons stop their run instead of going on.
 */
export class StoreBusyError extends StoreError {
  constructor(
    operation: string,
    /** When to try again: a few seconds, jittered so refused callers do not come back together. */
    readonly retryAfterSeconds: number,
  ) {
    super(operation, 'busy', undefined, undefined);
    this.message = SHOP_BUSY_MESSAGE;
  }
}

/** A failed call to the card provider. `code` is Stripe's error code (an identifier). */
export class CardProviderError extends ServiceError {
  readonly kind = 'card';
  constructor(
    readonly operation: string,
    readonly type: string,
    readonly status: number | undefined,
    readonly code: string | undefined,
  ) {
    super(`Payment provider request failed: ${operation}`, {
      operation,
      type,
      status: status ?? null,
      code: code ?? null,
    });
  }
}

export class ServiceNotConfiguredError extends ServiceError {
  readonly kind = 'not_configured';
}

export class InvalidSignatureError extends ServiceError {
  readonly kind = 'invalid_signature';
}

export class UnauthorizedError extends ServiceError {
  readonly kind = 'unauthorized';
  constructor() {
    super('Unauthorized');
  }
}

/** The per-order lock could not be taken in time: another request holds the order. */
export class OrderBusyError extends ServiceError {
  readonly kind = 'order_busy';
  constructor(orderId: number) {
    super('Order is being processed by another request, try again', { orderId });
  }
}

/**
 * A call from the store (lib/store-callbacks/) the service will not carry out: the order was not
 * paid by card, Stripe refused the refund or the capture, the amount does not match. Answered 400
 * with the message, written for the shop owner, who reads it in the WooCommerce admin.
 */
export class StoreCallbackRefusedError extends ServiceError {
  readonly kind = 'store_callback_refused';
}
