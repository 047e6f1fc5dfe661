/**
 * The one place where errors become responses (spec section 7).
 *
 * Each endpoint family has a profile: the two checkout endpoints share one
 * shape with their own error code; the webhooks have theirs. Unknown errors
 * become a generic failure; what went wrong is logged on the server by the
 * route wrapper, and only identifiers ever reach a response.
 */
import {
  InvalidRequestError,
  OrderNotPayableError,
  PayloadTooLargeError,
  RateLimitedError,
  ServiceError,
  ServiceNotConfiguredError,
  SHOP_BUSY_MESSAGE,
  StoreBusyError,
  UnauthorizedError,
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

export function rateLimitHeaders(error: RateLimitedError): Record<string, string> {
  return {
    'X-RateLimit-Limit': String(error.state.limit),
    'X-RateLimit-Remaining': '0',
    'X-RateLimit-Reset': new Date(error.state.resetAt).toISOString(),
  };
}

/** payment-intent and submit-order (spec 7, first rows). */
export function checkoutErrorResponse(
  error: unknown,
  profile: CheckoutErrorProfile,
  showDetails: boolean,
): ErrorResponse {
  if (error instanceof RateLimitedError) {
    return {
      status: 429,
      body: { error: 'Too many requests. Please try again later.' },
      headers: rateLimitHeaders(error),
    };
  }
  if (error instanceof PayloadTooLargeError) {
    return { status: 413, body: { error: 'Payload too large' } };
  }
  if (error instanceof InvalidRequestError) {
    // Request schemas have string keys only, so no issue path holds a symbol (which JSON could not carry).
    return { status: 400, body: { error: 'Invalid request', details: error.issues as ValidationIssue[] } };
  }
  if (error instanceof StoreBusyError) {
    // Nothing reached the store: the storefront shows the message and may send the same call again.
    return {
      status: 503,
      body: { success: false, error: { code: 'SHOP_BUSY', message: SHOP_BUSY_MESSAGE, retry_after_seconds: error.retryAfterSeconds } },
      headers: { 'Retry-After': String(error.retryAfterSeconds) },
    };
  }
  if (error instanceof OrderNotPayableError) {
    return {
      status: 400,
      body: {
        error: profile.notPayableMessage,
        details: { orderId: error.orderId, status: error.status, reason: error.reason },
      },
    };
  }
  const known = error instanceof ServiceError;
  const details = showDetails ? (known ? (error.details ?? { kind: error.kind }) : { kind: 'unexpected' }) : undefined;
  return {
    status: 500,
    body: {
      success: false,
      error: {
        code: profile.code,
        message: known ? error.message : GENERIC_MESSAGE,
        ...(details === undefined ? {} : { details }),
      },
    },
  };
}

/** The card-provider webhook: 429 without headers, 413, and 400 `{error}` for every failure so the provider retries. */
export function cardWebhookErrorResponse(error: unknown): ErrorResponse {
  if (error instanceof RateLimitedError) return { status: 429, body: { error: 'Too many requests' } };
  if (error instanceof PayloadTooLargeError) return { status: 413, body: { error: 'Payload too large' } };
  const message = error instanceof ServiceError ? error.message : 'Webhook processing failed';
  return { status: 400, body: { error: message } };
}

/** The shipping webhook: 429, 401 for a wrong shared secret, 413; everything else is acknowledged with 200. */
export function shippingWebhookErrorResponse(error: unknown): ErrorResponse {
  if (error instanceof RateLimitedError) return { status: 429, body: { error: 'Too many requests' } };
  if (error instanceof UnauthorizedError) return { status: 401, body: { error: 'Unauthorized' } };
  if (error instanceof PayloadTooLargeError) return { status: 413, body: { error: 'Payload too large' } };
  return { status: 200, body: { received: true } };
}

/**
 * The cron routes and the health check: 401 without the bearer token, 503 when
 * the service cannot run them (CRON_SECRET or an upstream setting unset), and a
 * generic 500 otherwise; the message names a variable at most, never a value.
 */
export function cronErrorResponse(error: unknown): ErrorResponse {
  if (error instanceof UnauthorizedError) return { status: 401, body: { error: 'Unauthorized' } };
  if (error instanceof ServiceNotConfiguredError) return { status: 503, body: { error: error.message } };
  // An upstream that failed the whole run (the provider's event list): its own message names the operation only.
  if (error instanceof ServiceError && (error.kind === 'card' || error.kind === 'store')) {
    return { status: 502, body: { error: error.message } };
  }
  return { status: 500, body: { error: GENERIC_MESSAGE } };
}
