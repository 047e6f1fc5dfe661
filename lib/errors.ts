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
 * them for every endpoint family in one table, so a new kind does not compile
 * until it is given its answers. Every error class lives in this file.
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

/**
 * What a failure was, in identifiers only (`Error:ECONNREFUSED`, `ErrorReply:WRONGPASS`): never the
 * message, which may carry an address or a reply's text.
 */
export function describeFailure(error: unknown): string {
  if (!(error instanceof Error)) return typeof error;
  const code = (error as { code?: unknown }).code;
  const reply = error.name === 'ErrorReply' ? /^[A-Z]+/.exec(error.message)?.[0] : undefined;
  return [error.name, typeof code === 'string' ? code : undefined, reply].filter(Boolean).join(':');
}

export abstract class ServiceError extends Error {
  abstract readonly kind: ErrorKind;
  readonly details: SafeDetails | undefined;

  constructor(message: string, details?: SafeDetails) {
    super(message);
    this.details = details;
  }

  /**
   * What failed, as an identifier for a log line or a run's summary: the kind, with the failure
   * within it where the class tells failures apart (`store:unavailable`); never a message.
   */
  get reasonCode(): string {
    return this.kind;
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

  override get reasonCode(): string {
    return `${this.kind}:${this.failure}`;
  }
}

/**
 * An OAuth 1.0a signature the store refused: WooCommerce signs over its own Site Address, whatever
 * address the request came to, so a store reached at another one refuses every call. `hint` says what to set.
 */
export class StoreSignatureRefusedError extends StoreError {
  constructor(
    operation: string,
    readonly hint: string,
  ) {
    super(operation, 'rejected', 401, 'woocommerce_rest_authentication_error');
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

/** A correctly signed card event the service cannot read (answered 400, changes nothing). */
export class InvalidCardEventError extends ServiceError {
  readonly kind = 'invalid_event';
}

/**
 * A card event that arrived before the one it follows (a refund or dispute before the payment was
 * recorded, a dispute closed before it was opened): answered 400 and not remembered, so the
 * provider delivers it again later, by when the earlier event has been applied.
 */
export class CardEventTooEarlyError extends ServiceError {
  readonly kind = 'event_too_early';
}

/** Why a shipment's resource URL was not read (lib/shipping/resource-url.ts): the sender's URL, never fetched. */
export const RESOURCE_URL_REFUSALS = ['malformed', 'foreign_origin', 'credentials_in_url', 'outside_base_path'] as const;
export type ResourceUrlRefusal = (typeof RESOURCE_URL_REFUSALS)[number];

export type ShipStationFailure =
  | ResourceUrlRefusal
  | 'rate_limited'
  | 'timeout'
  | 'unavailable'
  | 'rejected'
  | 'bad_response';

/** A failed call to ShipStation, or a resource URL refused before any call. */
export class ShipStationError extends ServiceError {
  readonly kind = 'shipstation';
  constructor(
    readonly failure: ShipStationFailure,
    readonly status: number | undefined,
    /** For a refused URL: the origin it pointed at (never its path or query). */
    readonly origin?: string,
  ) {
    super(`ShipStation request failed: ${failure}`, { failure, status: status ?? null });
  }

  override get reasonCode(): string {
    return `${this.kind}:${this.failure}`;
  }
}

/** Redis could not be reached, answered too slowly, or refused us; what the shared state needs is unknown. */
export class SharedStateUnavailableError extends ServiceError {
  readonly kind = 'shared_state_unavailable';
  constructor(operation: string, cause?: unknown) {
    // No cause (a client not connected) names none, rather than "undefined".
    super('Shared state is unavailable, try again', cause === undefined ? { operation } : { operation, cause: describeFailure(cause) });
  }
}

/*
 * The errors below are not ServiceErrors: none reaches a response as it is.
 * Each is turned into one of the kinds above where it is caught (a ConfigError
 * by the route wrapper into `not_configured`, a MoneyError by the refund call
 * into a refusal, an UpstreamHttpError by the store client into a StoreError,
 * a RedisTimeoutError is the cause a SharedStateUnavailableError names), or
 * stops a command-line script.
 */

/** The environment's settings are missing or invalid; the message names variables, never their values. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

/** An amount that is not a decimal the currency can hold (lib/money.ts). */
export class MoneyError extends Error {
  override readonly name = 'MoneyError';
}

/** A failed store call as axios shapes it (lib/upstream/node-http.ts): `code`, and `response` when the store answered outside 2xx. */
export class UpstreamHttpError extends Error {
  constructor(
    message: string,
    readonly code: string,
    readonly response?: { status: number; data: unknown },
  ) {
    super(message);
    this.name = 'UpstreamHttpError';
  }
}

/** A ShipStation webhook-management call of `npm run setup:webhooks` that failed: the operation and status, never a body. */
export class ShipStationSetupError extends Error {
  constructor(operation: string, status: number | undefined) {
    super(`ShipStation ${operation} failed${status === undefined ? ' (no answer)' : ` (HTTP ${status})`}`);
    this.name = 'ShipStationSetupError';
  }
}

/** A Redis command that outlived REDIS_TIMEOUT_MS (lib/redis/connection.ts). */
export class RedisTimeoutError extends Error {
  override readonly name = 'TimeoutError';
}
