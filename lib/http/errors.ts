/**
 * The one place where errors become responses (docs/contract.md#spec-7).
 *
 * Each endpoint family has a profile: the two checkout endpoints share one
 * shape with their own error code; the webhooks have theirs. Unknown errors
 * become a generic failure; what went wrong is logged on the server by the
 * route wrapper, and only identifiers ever reach a response.
 */
import {
  CardProviderError,
  InvalidRequestError,
  OrderBusyError,
  OrderNotPayableError,
  RateLimitedError,
  ServiceError,
  type ErrorKind,
  SHOP_BUSY_MESSAGE,
  StoreBusyError,
} from '@/lib/errors';
import type { ErrorResponseBody, ValidationIssue } from '@/lib/http/responses';

export interface ErrorResponse {
  status: number;
  body: ErrorResponseBody;
  headers?: Record<string, string>;
}

export interface CheckoutErrorProfile {
  code: 'PAYMENT_INTENT_ERROR' | 'SUBMIT_ORDER_ERROR';
  /** The 400 `error` when the order cannot be paid. */
  notPayableMessage: 'Order cannot be paid' | 'Order cannot be submitted for payment';
}

const GENERIC_MESSAGE = 'Internal server error';
export const ABORTED_MESSAGE = 'Request body was not received whole';

/** Reached only when a kind was left out of a switch below: the compiler rejects the call. */
function unanswered(kind: never): never {
  throw new Error(`no answer for error kind ${String(kind)}`);
}

export function rateLimitHeaders(error: RateLimitedError): Record<string, string> {
  return {
    'X-RateLimit-Limit': String(error.state.limit),
    'X-RateLimit-Remaining': '0',
    'X-RateLimit-Reset': new Date(error.state.resetAt).toISOString(),
  };
}

function invalidRequest(issues: ValidationIssue[]): ErrorResponse {
  return { status: 400, body: { error: 'Invalid request', details: issues } };
}

/** payment-intent and submit-order (docs/contract.md#spec-7, first rows). */
export function checkoutErrorResponse(
  error: unknown,
  profile: CheckoutErrorProfile,
  showDetails: boolean,
): ErrorResponse {
  if (!(error instanceof ServiceError)) return checkoutFailure(undefined, profile, showDetails);
  const kind: ErrorKind = error.kind;
  switch (kind) {
    case 'rate_limited':
      return {
        status: 429,
        body: { error: 'Too many requests. Please try again later.' },
        ...(error instanceof RateLimitedError ? { headers: rateLimitHeaders(error) } : {}),
      };
    case 'payload_too_large':
      return { status: 413, body: { error: 'Payload too large' } };
    case 'invalid_request':
      // Request schemas have string keys only, so no issue path holds a symbol (which JSON could not carry).
      return invalidRequest(error instanceof InvalidRequestError ? (error.issues as ValidationIssue[]) : []);
    case 'request_aborted':
      // A body that never arrived whole fails validation like a malformed one (docs/contract.md#spec-7: 400 Invalid request).
      return invalidRequest([{ code: 'custom', path: [], message: ABORTED_MESSAGE }]);
    case 'order_not_payable':
      if (!(error instanceof OrderNotPayableError)) return checkoutFailure(error, profile, showDetails);
      return {
        status: 400,
        body: {
          error: profile.notPayableMessage,
          details: { orderId: error.orderId, status: error.status, reason: error.reason },
        },
      };
    case 'invalid_origin':
    case 'invalid_token':
    case 'invalid_signature':
    case 'invalid_event':
    case 'unauthorized':
    case 'order_busy':
    case 'event_too_early':
    case 'store':
      if (error instanceof StoreBusyError) {
        // Nothing reached the store: the storefront shows the message and may send the same call again.
        return {
          status: 503,
          body: { success: false, error: { code: 'SHOP_BUSY', message: SHOP_BUSY_MESSAGE, retry_after_seconds: error.retryAfterSeconds } },
          headers: { 'Retry-After': String(error.retryAfterSeconds) },
        };
      }
      return checkoutFailure(error, profile, showDetails);
    case 'store_callback_refused':
    case 'not_configured':
    case 'card':
    case 'shipstation':
    case 'shared_state_unavailable':
      // docs/contract.md#spec-7: every other failure of a checkout endpoint is its 500, with a message saying what failed.
      return checkoutFailure(error, profile, showDetails);
    default:
      return unanswered(kind);
  }
}

function checkoutFailure(error: ServiceError | undefined, profile: CheckoutErrorProfile, showDetails: boolean): ErrorResponse {
  const details = showDetails ? (error ? (error.details ?? { kind: error.kind }) : { kind: 'unexpected' }) : undefined;
  return {
    status: 500,
    body: {
      success: false,
      error: {
        code: profile.code,
        message: error ? error.message : GENERIC_MESSAGE,
        ...(details === undefined ? {} : { details }),
      },
    },
  };
}

/** The card-provider webhook: 429 without headers, 413, and 400 `{error}` for every failure so the provider retries. */
export function cardWebhookErrorResponse(error: unknown): ErrorResponse {
  if (!(error instanceof ServiceError)) return { status: 400, body: { error: 'Webhook processing failed' } };
  const kind: ErrorKind = error.kind;
  switch (kind) {
    case 'rate_limited':
      return { status: 429, body: { error: 'Too many requests' } };
    case 'payload_too_large':
      return { status: 413, body: { error: 'Payload too large' } };
    case 'request_aborted':
    case 'invalid_request':
    case 'invalid_origin':
    case 'invalid_token':
    case 'invalid_signature':
    case 'invalid_event':
    case 'unauthorized':
    case 'order_not_payable':
    case 'order_busy':
    case 'event_too_early':
    case 'store_callback_refused':
    case 'not_configured':
    case 'store':
    case 'card':
    case 'shipstation':
    case 'shared_state_unavailable':
      return { status: 400, body: { error: error.message } };
    default:
      return unanswered(kind);
  }
}

/**
 * The shipping webhook: 429, 401 for a wrong shared secret, 413, 400 for a
 * body that never arrived whole (so the sender delivers it again); everything
 * else is acknowledged with 200.
 */
export function shippingWebhookErrorResponse(error: unknown): ErrorResponse {
  if (!(error instanceof ServiceError)) return { status: 200, body: { received: true } };
  const kind: ErrorKind = error.kind;
  switch (kind) {
    case 'rate_limited':
      return { status: 429, body: { error: 'Too many requests' } };
    case 'unauthorized':
      return { status: 401, body: { error: 'Unauthorized' } };
    case 'payload_too_large':
      return { status: 413, body: { error: 'Payload too large' } };
    case 'request_aborted':
      return { status: 400, body: { error: ABORTED_MESSAGE } };
    case 'invalid_request':
    case 'invalid_origin':
    case 'invalid_token':
    case 'invalid_signature':
    case 'invalid_event':
    case 'order_not_payable':
    case 'order_busy':
    case 'event_too_early':
    case 'store_callback_refused':
    case 'not_configured':
    case 'store':
    case 'card':
    case 'shipstation':
    case 'shared_state_unavailable':
      return { status: 200, body: { received: true } };
    default:
      return unanswered(kind);
  }
}

/**
 * The cron routes and the health check: 401 without the bearer token, 503 when
 * the service cannot run them (an upstream setting unset), 502 when an
 * upstream failed the whole run, and a generic 500 otherwise; the message
 * names a variable or an operation at most, never a value.
 */
export function cronErrorResponse(error: unknown): ErrorResponse {
  if (!(error instanceof ServiceError)) return { status: 500, body: { error: GENERIC_MESSAGE } };
  const kind: ErrorKind = error.kind;
  switch (kind) {
    case 'unauthorized':
      return { status: 401, body: { error: 'Unauthorized' } };
    case 'not_configured':
      return { status: 503, body: { error: error.message } };
    case 'card':
    case 'store':
      // An upstream that failed the whole run (the provider's event list): its own message names the operation only.
      return { status: 502, body: { error: error.message } };
    case 'rate_limited':
    case 'invalid_request':
    case 'payload_too_large':
    case 'request_aborted':
    case 'invalid_origin':
    case 'invalid_token':
    case 'invalid_signature':
    case 'invalid_event':
    case 'order_not_payable':
    case 'order_busy':
    case 'event_too_early':
    case 'store_callback_refused':
    case 'shipstation':
    case 'shared_state_unavailable':
      return { status: 500, body: { error: GENERIC_MESSAGE } };
    default:
      return unanswered(kind);
  }
}

/**
 * The store's calls (/api/store/*, docs/decisions.md#d15): the plugin shows `error` to the shop owner. 401 for a
 * bad signature, 503 without STORE_CALLBACK_SECRET, 400 for a bad body or a refusal (in plain words),
 * 409 while another request holds the order, 502 when Stripe or the store did not answer (a retry is safe).
 */
export function storeCallbackErrorResponse(error: unknown): ErrorResponse {
  if (!(error instanceof ServiceError)) return { status: 500, body: { error: GENERIC_MESSAGE } };
  const kind: ErrorKind = error.kind;
  switch (kind) {
    case 'unauthorized':
    case 'invalid_signature':
      return { status: 401, body: { error: 'Unauthorized' } };
    case 'not_configured':
      return { status: 503, body: { error: error.message } };
    case 'payload_too_large':
      return { status: 413, body: { error: 'Payload too large' } };
    case 'invalid_request':
      return invalidRequest(error instanceof InvalidRequestError ? (error.issues as ValidationIssue[]) : []);
    case 'request_aborted':
      return invalidRequest([{ code: 'custom', path: [], message: ABORTED_MESSAGE }]);
    case 'store_callback_refused':
      return { status: 400, body: { error: error.message } };
    case 'order_busy':
      return { status: 409, body: { error: error.message } };
    case 'card':
      return { status: 502, body: { error: 'Stripe could not be reached or did not answer: try again in a moment.' } };
    case 'store':
      return { status: 502, body: { error: 'The service could not read the order from the store: try again in a moment.' } };
    case 'rate_limited':
    case 'invalid_origin':
    case 'invalid_token':
    case 'invalid_event':
    case 'order_not_payable':
    case 'event_too_early':
    case 'shipstation':
    case 'shared_state_unavailable':
      return { status: 500, body: { error: GENERIC_MESSAGE } };
    default:
      return unanswered(kind);
  }
}
