/**
 * The service's typed errors, answered by lib/http/errors.ts (docs/contract.md#errors-all-routes).
 * Messages never carry a secret, token, address or upstream body; `details` holds identifiers only.
 */
import type { ZodError } from 'zod';

export type SafeDetails = Record<string, string | number | boolean | null>;

/** The closed list of kinds: lib/http/errors.ts answers each in one table, so a new kind does not compile without its row. */
export const ERROR_KINDS = [
  'rate_limited',
  'invalid_request',
  'payload_too_large',
  'request_aborted',
  'invalid_origin',
  'invalid_token',
  'invalid_signature',
  'invalid_event',
  'unauthorized',
  'order_not_payable',
  'order_busy',
  'event_too_early',
  'store_callback_refused',
  'not_configured',
  'store',
  'card',
  'shipstation',
  'shared_state_unavailable',
] as const;

export type ErrorKind = (typeof ERROR_KINDS)[number];

/** A failure in identifiers only (`Error:ECONNREFUSED`): its message may carry an address or a reply's text. */
export function describeFailure(error: unknown): string {
  if (!(error instanceof Error)) return typeof error;
  const code = (error as { code?: unknown }).code;
  const reply = error.name === 'ErrorReply' ? /^[A-Z]+/.exec(error.message)?.[0] : undefined;
  return [error.name, typeof code === 'string' ? code : undefined, reply].filter(Boolean).join(':');
}

export abstract class ServiceError extends Error {
  abstract readonly kind: ErrorKind;

  constructor(
    message: string,
    readonly details?: SafeDetails,
  ) {
    super(message);
  }

  /** For a log line or a run's summary: the kind, with the failure where the class has one (`store:unavailable`). */
  get reasonCode(): string {
    const { failure } = this as { failure?: string };
    return failure === undefined ? this.kind : `${this.kind}:${failure}`;
  }
}

/** A ServiceError class of one kind whose message is given where it is thrown, or is always `message`; every class below extends one. */
function kindError<const K extends ErrorKind>(kind: K, message?: string) {
  return class extends ServiceError {
    readonly kind = kind;
    constructor(thrownMessage = message ?? kind, details?: SafeDetails) {
      super(thrownMessage, details);
    }
  };
}

/** A ServiceError class of one kind and message whose details are built from the one thing it is thrown with. */
const detailedError = <const K extends ErrorKind, A>(kind: K, message: string, details: (thrownWith: A) => SafeDetails) =>
  class extends kindError(kind, message) {
    constructor(thrownWith: A) {
      super(message, details(thrownWith));
    }
  };

export interface RateLimitState {
  limit: number;
  remaining: number;
  resetAt: number;
}

export class RateLimitedError extends kindError('rate_limited') {
  constructor(readonly state: RateLimitState) {
    super('Too many requests');
  }
}

export class InvalidRequestError extends kindError('invalid_request') {
  constructor(readonly issues: ZodError['issues']) {
    super('Invalid request');
  }
}

export const PayloadTooLargeError = kindError('payload_too_large', 'Payload too large');

/** The body did not arrive whole: the client's doing, so answered 400 and logged below error level. */
const abortReason = (reason: 'stream_error' | 'short_body') => ({ reason });
export const RequestAbortedError = detailedError('request_aborted', 'Request body was not received whole', abortReason);

export const NOT_PAYABLE_REASONS = ['Order is already paid', 'Order status is not pending'] as const;
export type NotPayableReason = (typeof NOT_PAYABLE_REASONS)[number];

export class OrderNotPayableError extends kindError('order_not_payable') {
  constructor(
    readonly orderId: number,
    readonly status: string,
    readonly reason: NotPayableReason,
  ) {
    super(reason);
  }
}

export const InvalidOriginError = kindError('invalid_origin', 'Request origin is not allowed');

export const InvalidTokenError = detailedError('invalid_token', 'Checkout token is invalid or expired', (reason: string) => ({ reason }));

/** A provider call's failure in identifiers, `how` in the provider's words (the store's `failure`, the card's `type`). */
const callDetails = (operation: string, how: Record<string, string>, status: number | undefined, code: string | undefined): SafeDetails =>
  ({ operation, ...how, status: status ?? null, code: code ?? null });

export type StoreFailure = 'not_found' | 'invalid_param' | 'rejected' | 'unavailable' | 'timeout' | 'bad_response' | 'busy';

export class StoreError extends kindError('store') {
  constructor(
    readonly operation: string,
    readonly failure: StoreFailure,
    readonly status: number | undefined,
    readonly code: string | undefined,
  ) {
    super(`Store request failed: ${operation}`, callDetails(operation, { failure }, status, code));
  }
}

/** WooCommerce signs over its own Site Address, so a store reached at another address refuses every call. */
export class StoreSignatureRefusedError extends StoreError {
  constructor(
    operation: string,
    readonly hint: string,
  ) {
    super(operation, 'rejected', 401, 'woocommerce_rest_authentication_error');
  }
}

export const SHOP_BUSY_MESSAGE = 'The shop is busy, try again in a few seconds';

/** A store call not sent, every STORE_MAX_CONCURRENCY slot taken (docs/decisions.md#d33): always safe to retry. */
export class StoreBusyError extends StoreError {
  constructor(
    operation: string,
    readonly retryAfterSeconds: number,
  ) {
    super(operation, 'busy', undefined, undefined);
    this.message = SHOP_BUSY_MESSAGE;
  }
}

export class CardProviderError extends kindError('card') {
  constructor(
    readonly operation: string,
    readonly type: string,
    readonly status: number | undefined,
    readonly code: string | undefined,
  ) {
    super(`Payment provider request failed: ${operation}`, callDetails(operation, { type }, status, code));
  }
}

export const ServiceNotConfiguredError = kindError('not_configured');
export const InvalidSignatureError = kindError('invalid_signature');
export const UnauthorizedError = kindError('unauthorized', 'Unauthorized');

export const OrderBusyError = detailedError('order_busy', 'Order is being processed by another request, try again', (orderId: number) =>
  ({ orderId }));

/** Answered 400 with its message, which the shop owner reads in the WooCommerce admin. */
export const StoreCallbackRefusedError = kindError('store_callback_refused');
export const InvalidCardEventError = kindError('invalid_event');

/** An event before the one it follows: answered 400 and not remembered, so Stripe redelivers it later. */
export const CardEventTooEarlyError = kindError('event_too_early');

export const RESOURCE_URL_REFUSALS = ['malformed', 'foreign_origin', 'credentials_in_url', 'outside_base_path'] as const;
export type ResourceUrlRefusal = (typeof RESOURCE_URL_REFUSALS)[number];

type ShipStationFailure =
  | ResourceUrlRefusal
  | 'rate_limited'
  | 'timeout'
  | 'unavailable'
  | 'rejected'
  | 'bad_response';

export class ShipStationError extends kindError('shipstation') {
  constructor(
    readonly failure: ShipStationFailure,
    readonly status: number | undefined,
    /** For a refused URL: its origin only, never its path or query. */
    readonly origin?: string,
  ) {
    super(`ShipStation request failed: ${failure}`, { failure, status: status ?? null });
  }
}

export class SharedStateUnavailableError extends kindError('shared_state_unavailable') {
  constructor(operation: string, cause?: unknown) {
    super('Shared state is unavailable, try again', cause === undefined ? { operation } : { operation, cause: describeFailure(cause) });
  }
}

// Not ServiceErrors: each becomes one of the kinds above where it is caught, or stops a script.

/** Names variables, never their values. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

export class MoneyError extends Error {
  override readonly name = 'MoneyError';
}

/** A failed store call as axios shapes it (lib/upstream/node-http.ts). */
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

export class RedisTimeoutError extends Error {
  override readonly name = 'TimeoutError';
}
