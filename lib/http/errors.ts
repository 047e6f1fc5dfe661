/** The one place where errors become responses (docs/contract.md#spec-7): one table, every kind on every family. */
import {
  InvalidRequestError,
  OrderNotPayableError,
  RateLimitedError,
  ServiceError,
  type ErrorKind,
  SHOP_BUSY_MESSAGE,
  StoreBusyError,
} from '@/lib/errors';
import type { CHECKOUT_ERROR_CODES, ErrorResponseBody, NotPayableResponse, ValidationIssue } from '@/lib/http/responses';

export interface ErrorResponse {
  status: number;
  body: ErrorResponseBody;
  headers?: Record<string, string>;
}

export interface CheckoutErrorProfile {
  code: (typeof CHECKOUT_ERROR_CODES)[number];
  notPayableMessage: NotPayableResponse['error'];
}

const GENERIC_MESSAGE = 'Internal server error';
const ABORTED_MESSAGE = 'Request body was not received whole';

function invalidRequest(issues: ValidationIssue[]): ErrorResponse {
  return { status: 400, body: { error: 'Invalid request', details: issues } };
}

function checkoutFails(error: ServiceError | undefined, profile: CheckoutErrorProfile, showDetails: boolean): ErrorResponse {
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

type Answer = (error: ServiceError) => ErrorResponse;

/** storeCallback: the plugin shows `error` to the shop owner (docs/decisions.md#d15). */
interface Answers extends Record<'cardWebhook' | 'shippingWebhook' | 'cron' | 'storeCallback', Answer> {
  checkout: (error: ServiceError, profile: CheckoutErrorProfile, showDetails: boolean) => ErrorResponse;
}

const generic500 = (): ErrorResponse => ({ status: 500, body: { error: GENERIC_MESSAGE } });
const acknowledged = (): ErrorResponse => ({ status: 200, body: { received: true } });
const withMessage = (status: number) => (error: ServiceError): ErrorResponse => ({ status, body: { error: error.message } });
const tooManyRequests = (): ErrorResponse => ({ status: 429, body: { error: 'Too many requests' } });
const tooLarge = (): ErrorResponse => ({ status: 413, body: { error: 'Payload too large' } });
const unauthorized = (): ErrorResponse => ({ status: 401, body: { error: 'Unauthorized' } });
// Request schemas have string keys only, so no issue path holds a symbol (which JSON could not carry).
const invalidRequestOf = (error: ServiceError): ErrorResponse =>
  invalidRequest(error instanceof InvalidRequestError ? (error.issues as ValidationIssue[]) : []);
const notReceivedWhole = (): ErrorResponse => invalidRequest([{ code: 'custom', path: [], message: ABORTED_MESSAGE }]);

/** Most kinds: the checkout's failure body, a redelivery for the card provider, an acknowledgement for shipping, a plain 500. */
const USUAL: Answers = {
  checkout: checkoutFails,
  cardWebhook: withMessage(400),
  shippingWebhook: acknowledged,
  cron: generic500,
  storeCallback: generic500,
};

/** A row per kind, so a new kind does not compile without one; each row says where it differs from USUAL. */
const ANSWERS: Record<ErrorKind, Partial<Answers>> = {
  rate_limited: {
    checkout: (error) => ({
      status: 429,
      body: { error: 'Too many requests. Please try again later.' },
      ...(error instanceof RateLimitedError
        ? {
            headers: {
              'X-RateLimit-Limit': String(error.state.limit),
              'X-RateLimit-Remaining': '0',
              'X-RateLimit-Reset': new Date(error.state.resetAt).toISOString(),
            },
          }
        : {}),
    }),
    cardWebhook: tooManyRequests,
    shippingWebhook: tooManyRequests,
  },
  invalid_request: { checkout: invalidRequestOf, storeCallback: invalidRequestOf },
  payload_too_large: { checkout: tooLarge, cardWebhook: tooLarge, shippingWebhook: tooLarge, storeCallback: tooLarge },
  request_aborted: {
    checkout: notReceivedWhole,
    shippingWebhook: () => ({ status: 400, body: { error: ABORTED_MESSAGE } }),
    storeCallback: notReceivedWhole,
  },
  invalid_origin: {},
  invalid_token: {},
  invalid_signature: { storeCallback: unauthorized },
  invalid_event: {},
  unauthorized: { shippingWebhook: unauthorized, cron: unauthorized, storeCallback: unauthorized },
  order_not_payable: {
    checkout: (error, profile, showDetails) =>
      error instanceof OrderNotPayableError
        ? {
            status: 400,
            body: { error: profile.notPayableMessage, details: { orderId: error.orderId, status: error.status, reason: error.reason } },
          }
        : checkoutFails(error, profile, showDetails),
  },
  order_busy: { storeCallback: withMessage(409) },
  event_too_early: {},
  store_callback_refused: { storeCallback: withMessage(400) },
  not_configured: { cron: withMessage(503), storeCallback: withMessage(503) },
  store: {
    checkout: (error, profile, showDetails) =>
      // Not sent, so safe to repeat: a later call refused after an earlier one landed has the same idempotency key.
      error instanceof StoreBusyError
        ? {
            status: 503,
            body: { success: false, error: { code: 'SHOP_BUSY', message: SHOP_BUSY_MESSAGE, retry_after_seconds: error.retryAfterSeconds } },
            headers: { 'Retry-After': String(error.retryAfterSeconds) },
          }
        : checkoutFails(error, profile, showDetails),
    cron: withMessage(502),
    storeCallback: () => ({ status: 502, body: { error: 'The service could not read the order from the store: try again in a moment.' } }),
  },
  card: {
    cron: withMessage(502),
    storeCallback: () => ({ status: 502, body: { error: 'Stripe could not be reached or did not answer: try again in a moment.' } }),
  },
  shipstation: {},
  shared_state_unavailable: {},
};

export function checkoutErrorResponse(error: unknown, profile: CheckoutErrorProfile, showDetails: boolean): ErrorResponse {
  if (!(error instanceof ServiceError)) return checkoutFails(undefined, profile, showDetails);
  return (ANSWERS[error.kind].checkout ?? USUAL.checkout)(error, profile, showDetails);
}

/** A family's answer to any error; `otherwise` answers one that is not a ServiceError. */
const answerFor =
  (family: Exclude<keyof Answers, 'checkout'>, otherwise: () => ErrorResponse) =>
  (error: unknown): ErrorResponse =>
    error instanceof ServiceError ? (ANSWERS[error.kind][family] ?? USUAL[family])(error) : otherwise();

export const cardWebhookErrorResponse = answerFor('cardWebhook', () => ({ status: 400, body: { error: 'Webhook processing failed' } }));
export const shippingWebhookErrorResponse = answerFor('shippingWebhook', acknowledged);
export const cronErrorResponse = answerFor('cron', generic500);
export const storeCallbackErrorResponse = answerFor('storeCallback', generic500);
