/**
 * The one place where errors become responses (docs/contract.md#spec-7).
 *
 * One table (ANSWERS) gives every kind of error its answer on every endpoint
 * family: the two checkout endpoints share one shape with their own error
 * code (a profile); the webhooks, the crons and the store's calls have
 * theirs. Errors that are not ServiceErrors become a generic failure; what went wrong is logged on the server by the
 * route wrapper, and only identifiers ever reach a response.
 */
import {
  InvalidRequestError,
  OrderNotPayableError,
  RateLimitedError,
  ServiceError,
  type ErrorKind,
  SHOP_BUSY_MESSAGE,
  StoreBusyError,
} from '@/lib/errors';
import type { CHECKOUT_ERROR_CODES, ErrorResponseBody, ValidationIssue } from '@/lib/http/responses';

export interface ErrorResponse {
  status: number;
  body: ErrorResponseBody;
  headers?: Record<string, string>;
}

export interface CheckoutErrorProfile {
  code: (typeof CHECKOUT_ERROR_CODES)[number];
  /** The 400 `error` when the order cannot be paid. */
  notPayableMessage: 'Order cannot be paid' | 'Order cannot be submitted for payment';
}

const GENERIC_MESSAGE = 'Internal server error';
export const ABORTED_MESSAGE = 'Request body was not received whole';

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

/** What a checkout answer needs besides the error: the endpoint's own code and messages. */
interface CheckoutAnswerContext {
  profile: CheckoutErrorProfile;
  showDetails: boolean;
}

/** One error's answer on each endpoint family. */
interface Answers {
  /** payment-intent and submit-order (docs/contract.md#spec-7, first rows): every failure not the caller's is the endpoint's 500. */
  checkout: (error: ServiceError, context: CheckoutAnswerContext) => ErrorResponse;
  /** The card-provider webhook: 400 `{error}` for every failure, so the provider delivers the event again. */
  cardWebhook: (error: ServiceError) => ErrorResponse;
  /**
   * The shipping webhook: 429, 401 for a wrong shared secret, 413, 400 for a body that never
   * arrived whole (so the sender delivers it again); everything else is acknowledged with 200.
   */
  shippingWebhook: (error: ServiceError) => ErrorResponse;
  /**
   * The cron routes and the health check: 401 without the bearer token, 503 when the service cannot
   * run them (an upstream setting unset), 502 when an upstream failed the whole run, and a generic
   * 500 otherwise; the message names a variable or an operation at most, never a value.
   */
  cron: (error: ServiceError) => ErrorResponse;
  /**
   * The store's calls (/api/store/*, docs/decisions.md#d15): the plugin shows `error` to the shop owner. 401
   * for a bad signature, 503 without STORE_CALLBACK_SECRET, 400 for a bad body or a refusal (in plain
   * words), 409 while another request holds the order, 502 when Stripe or the store did not answer
   * (a retry is safe).
   */
  storeCallback: (error: ServiceError) => ErrorResponse;
}

const checkoutFails: Answers['checkout'] = (error, { profile, showDetails }) => checkoutFailure(error, profile, showDetails);
const generic500 = (): ErrorResponse => ({ status: 500, body: { error: GENERIC_MESSAGE } });
const acknowledged = (): ErrorResponse => ({ status: 200, body: { received: true } });
/** The card webhook's answer to every failure but 429 and 413: the provider retries a 400. */
const redeliver = (error: ServiceError): ErrorResponse => ({ status: 400, body: { error: error.message } });
const withMessage = (status: number) => (error: ServiceError): ErrorResponse => ({ status, body: { error: error.message } });
const tooManyRequests = (): ErrorResponse => ({ status: 429, body: { error: 'Too many requests' } });
const tooLarge = (): ErrorResponse => ({ status: 413, body: { error: 'Payload too large' } });
const unauthorized = (): ErrorResponse => ({ status: 401, body: { error: 'Unauthorized' } });
// Request schemas have string keys only, so no issue path holds a symbol (which JSON could not carry).
const invalidRequestOf = (error: ServiceError): ErrorResponse =>
  invalidRequest(error instanceof InvalidRequestError ? (error.issues as ValidationIssue[]) : []);
// A body that never arrived whole fails validation like a malformed one (docs/contract.md#spec-7: 400 Invalid request).
const notReceivedWhole = (): ErrorResponse => invalidRequest([{ code: 'custom', path: [], message: ABORTED_MESSAGE }]);

/**
 * Every kind's answer on every endpoint family, the one table: a kind left out, or a family left
 * out of a kind, does not compile.
 */
const ANSWERS: Record<ErrorKind, Answers> = {
  rate_limited: {
    checkout: (error) => ({
      status: 429,
      body: { error: 'Too many requests. Please try again later.' },
      ...(error instanceof RateLimitedError ? { headers: rateLimitHeaders(error) } : {}),
    }),
    cardWebhook: tooManyRequests,
    shippingWebhook: tooManyRequests,
    cron: generic500,
    storeCallback: generic500,
  },
  invalid_request: {
    checkout: invalidRequestOf,
    cardWebhook: redeliver,
    shippingWebhook: acknowledged,
    cron: generic500,
    storeCallback: invalidRequestOf,
  },
  payload_too_large: {
    checkout: tooLarge,
    cardWebhook: tooLarge,
    shippingWebhook: tooLarge,
    cron: generic500,
    storeCallback: tooLarge,
  },
  request_aborted: {
    checkout: notReceivedWhole,
    cardWebhook: redeliver,
    shippingWebhook: () => ({ status: 400, body: { error: ABORTED_MESSAGE } }),
    cron: generic500,
    storeCallback: notReceivedWhole,
  },
  invalid_origin: { checkout: checkoutFails, cardWebhook: redeliver, shippingWebhook: acknowledged, cron: generic500, storeCallback: generic500 },
  invalid_token: { checkout: checkoutFails, cardWebhook: redeliver, shippingWebhook: acknowledged, cron: generic500, storeCallback: generic500 },
  invalid_signature: {
    checkout: checkoutFails,
    cardWebhook: redeliver,
    shippingWebhook: acknowledged,
    cron: generic500,
    storeCallback: unauthorized,
  },
  invalid_event: { checkout: checkoutFails, cardWebhook: redeliver, shippingWebhook: acknowledged, cron: generic500, storeCallback: generic500 },
  unauthorized: {
    checkout: checkoutFails,
    cardWebhook: redeliver,
    shippingWebhook: unauthorized,
    cron: unauthorized,
    storeCallback: unauthorized,
  },
  order_not_payable: {
    checkout: (error, context) =>
      error instanceof OrderNotPayableError
        ? {
            status: 400,
            body: {
              error: context.profile.notPayableMessage,
              details: { orderId: error.orderId, status: error.status, reason: error.reason },
            },
          }
        : checkoutFails(error, context),
    cardWebhook: redeliver,
    shippingWebhook: acknowledged,
    cron: generic500,
    storeCallback: generic500,
  },
  order_busy: { checkout: checkoutFails, cardWebhook: redeliver, shippingWebhook: acknowledged, cron: generic500, storeCallback: withMessage(409) },
  event_too_early: { checkout: checkoutFails, cardWebhook: redeliver, shippingWebhook: acknowledged, cron: generic500, storeCallback: generic500 },
  store_callback_refused: {
    checkout: checkoutFails,
    cardWebhook: redeliver,
    shippingWebhook: acknowledged,
    cron: generic500,
    storeCallback: withMessage(400),
  },
  not_configured: {
    checkout: checkoutFails,
    cardWebhook: redeliver,
    shippingWebhook: acknowledged,
    cron: withMessage(503),
    storeCallback: withMessage(503),
  },
  store: {
    checkout: (error, context) =>
      // The refused call was not sent: the storefront shows the message and may send the same call again
      // (a later call refused after an earlier one landed is safe to repeat too: the same order, the same
      // idempotency key, the same intent).
      error instanceof StoreBusyError
        ? {
            status: 503,
            body: { success: false, error: { code: 'SHOP_BUSY', message: SHOP_BUSY_MESSAGE, retry_after_seconds: error.retryAfterSeconds } },
            headers: { 'Retry-After': String(error.retryAfterSeconds) },
          }
        : checkoutFails(error, context),
    cardWebhook: redeliver,
    shippingWebhook: acknowledged,
    // An upstream that failed the whole run (the provider's event list): its own message names the operation only.
    cron: withMessage(502),
    storeCallback: () => ({ status: 502, body: { error: 'The service could not read the order from the store: try again in a moment.' } }),
  },
  card: {
    checkout: checkoutFails,
    cardWebhook: redeliver,
    shippingWebhook: acknowledged,
    cron: withMessage(502),
    storeCallback: () => ({ status: 502, body: { error: 'Stripe could not be reached or did not answer: try again in a moment.' } }),
  },
  shipstation: { checkout: checkoutFails, cardWebhook: redeliver, shippingWebhook: acknowledged, cron: generic500, storeCallback: generic500 },
  shared_state_unavailable: {
    checkout: checkoutFails,
    cardWebhook: redeliver,
    shippingWebhook: acknowledged,
    cron: generic500,
    storeCallback: generic500,
  },
};

/** payment-intent and submit-order. */
export function checkoutErrorResponse(error: unknown, profile: CheckoutErrorProfile, showDetails: boolean): ErrorResponse {
  if (!(error instanceof ServiceError)) return checkoutFailure(undefined, profile, showDetails);
  return ANSWERS[error.kind].checkout(error, { profile, showDetails });
}

export function cardWebhookErrorResponse(error: unknown): ErrorResponse {
  if (!(error instanceof ServiceError)) return { status: 400, body: { error: 'Webhook processing failed' } };
  return ANSWERS[error.kind].cardWebhook(error);
}

export function shippingWebhookErrorResponse(error: unknown): ErrorResponse {
  if (!(error instanceof ServiceError)) return acknowledged();
  return ANSWERS[error.kind].shippingWebhook(error);
}

export function cronErrorResponse(error: unknown): ErrorResponse {
  if (!(error instanceof ServiceError)) return generic500();
  return ANSWERS[error.kind].cron(error);
}

export function storeCallbackErrorResponse(error: unknown): ErrorResponse {
  if (!(error instanceof ServiceError)) return generic500();
  return ANSWERS[error.kind].storeCallback(error);
}
