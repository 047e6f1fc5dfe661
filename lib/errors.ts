/**
 * The service's typed errors. Every failure the service knows about is one of
 * these; lib/http/errors.ts turns them into the spec's response bodies
 * (section 7). Messages are written for the caller and never carry a secret,
 * a token, an address or an upstream response body. `details` holds
 * identifiers only and is shown to callers only when NODE_ENV=development.
 */
import type { ZodError } from 'zod';

export type SafeDetails = Record<string, string | number | boolean | null>;

export abstract class ServiceError extends Error {
  abstract readonly kind: string;
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

/** `busy`: not sent at all, the cap on concurrent store calls was reached (lib/store/slots.ts). */
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
 * through the short wait (lib/store/slots.ts). A store failure like the others
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
