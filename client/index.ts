/**
 * The storefront's client for the checkout payment service: createPaymentIntent
 * (card payments, with Stripe's Payment Element), submitOrder (manual
 * payments), shippingRates and chooseShippingRate (express checkout), with
 * typed results and one error class per answer the storefront can act on. No runtime dependency: it runs in a browser or on a server.
 */
import type {
  CheckoutBusyResponse,
  CheckoutFailureResponse,
  ChosenShippingRate,
  InvalidRequestResponse,
  NotPayableReason,
  NotPayableResponse,
  PaymentIntent,
  PaymentIntentInput,
  ShippingRateInput,
  ShippingRates,
  ShippingRatesInput,
  SubmitOrderInput,
  SubmittedOrder,
  ValidationIssue,
} from './types.js';

export type {
  Address,
  CheckoutBusyResponse,
  CheckoutFailureResponse,
  ChosenShippingRate,
  ContactInfo,
  ExpressShippingRate,
  InvalidRequestResponse,
  NotPayableReason,
  NotPayableResponse,
  PaymentIntent,
  PaymentIntentInput,
  SheetLineItem,
  ShippingRateInput,
  ShippingRates,
  ShippingRatesInput,
  SubmitOrderInput,
  SubmittedOrder,
  ValidationIssue,
  WalletAddress,
} from './types.js';

/** Every error this client throws. */
export class CheckoutClientError extends Error {
  /** The HTTP status, or undefined when no answer arrived. */
  readonly status: number | undefined;

  constructor(message: string, status: number | undefined) {
    super(message);
    this.name = new.target.name;
    this.status = status;
  }
}

/** 429: too many requests from this client; try again after `resetAt`. */
export class RateLimited extends CheckoutClientError {
  /** When the window ends; undefined only if something between the service and the caller dropped the header. */
  readonly resetAt: Date | undefined;
  readonly limit: number | undefined;

  constructor(message: string, resetAt: Date | undefined, limit: number | undefined) {
    super(message, 429);
    this.resetAt = resetAt;
    this.limit = limit;
  }
}

/** 400: the order cannot be paid (already paid, or no longer pending): show the order instead of a payment form. */
export class NotPayable extends CheckoutClientError {
  readonly orderId: number;
  readonly orderStatus: string;
  readonly reason: NotPayableReason;

  constructor(body: NotPayableResponse) {
    super(body.error, 400);
    this.orderId = body.details.orderId;
    this.orderStatus = body.details.status;
    this.reason = body.details.reason;
  }
}

/** 400: the body failed validation; `issues` name the fields (zod's issues, with `path` and `message`). */
export class InvalidRequest extends CheckoutClientError {
  readonly issues: ValidationIssue[];

  constructor(body: InvalidRequestResponse) {
    super(body.error, 400);
    this.issues = body.details;
  }
}

/**
 * 503: the shop is busy (a flash sale: the store takes only so many calls at
 * once) and nothing was done. Show `message` ("The shop is busy, try again in a
 * few seconds") and let the customer try again. The client has already sent
 * the call a second time by itself when the service asked for a short wait.
 */
export class ShopBusy extends CheckoutClientError {
  /** What the service asked to wait before the next try. */
  readonly retryAfterSeconds: number;

  constructor(body: CheckoutBusyResponse) {
    super(body.error.message, 503);
    this.retryAfterSeconds = body.error.retry_after_seconds;
  }
}

/**
 * Any other failure: the service's 500 (`code` PAYMENT_INTENT_ERROR or
 * SUBMIT_ORDER_ERROR, EXPRESS_CHECKOUT_ERROR: token invalid or expired, origin not allowed, an upstream
 * failing), 413, an unexpected answer, or no answer at all (`code` NETWORK_ERROR).
 */
export class ServiceError extends CheckoutClientError {
  readonly code: string;
  /** Only in a development environment of the service. */
  readonly details: unknown;

  constructor(message: string, status: number | undefined, code: string, details?: unknown) {
    super(message, status);
    this.code = code;
    this.details = details;
  }
}

export interface CheckoutClientOptions {
  /** The service's base URL, e.g. `https://checkout.example.com`; '' for the same origin. */
  baseUrl: string;
  /** Defaults to the global fetch; inject one for tests, a server runtime or a custom agent. */
  fetch?: typeof fetch;
  /**
   * Whether a busy answer (503 ShopBusy) is sent again once, after the wait the service asks
   * for, when that wait is at most 5 s (default true). Nothing was done by the busy call, so
   * sending it again is always safe.
   */
  retryWhenBusy?: boolean;
}

export interface CallOptions {
  signal?: AbortSignal;
}

export interface CheckoutClient {
  /** Creates (or reuses) the order's card payment intent; returns the client secret for Stripe.js. */
  createPaymentIntent(input: PaymentIntentInput, options?: CallOptions): Promise<PaymentIntent>;
  /** Submits the order for manual payment; returns the order id and the server-computed total. */
  submitOrder(input: SubmitOrderInput, options?: CallOptions): Promise<SubmittedOrder>;
  /** Express checkout: the order's shipping rates at the wallet's address, each with the order's total there; changes nothing. */
  shippingRates(input: ShippingRatesInput, options?: CallOptions): Promise<ShippingRates>;
  /** Express checkout: writes the rate and address to the order and brings its intent to the new total, which it returns. */
  chooseShippingRate(input: ShippingRateInput, options?: CallOptions): Promise<ChosenShippingRate>;
}

type JsonRecord = Record<string, unknown>;

const isRecord = (value: unknown): value is JsonRecord => typeof value === 'object' && value !== null && !Array.isArray(value);

/** The longest wait the client sits out by itself before its one retry of a busy answer. */
const LONGEST_AUTOMATIC_WAIT_SECONDS = 5;

function busyAnswer(status: number, body: unknown): CheckoutBusyResponse | undefined {
  if (status !== 503 || !isRecord(body) || !isRecord(body.error) || body.error.code !== 'SHOP_BUSY') return undefined;
  const seconds = body.error.retry_after_seconds;
  return typeof seconds === 'number' && Number.isInteger(seconds) && seconds > 0 ? (body as CheckoutBusyResponse) : undefined;
}

/** Resolves after `ms`, or rejects with the abort reason as soon as `signal` aborts. */
function waitFor(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

function errorFor(status: number, headers: Headers, body: unknown): CheckoutClientError {
  const record = isRecord(body) ? body : {};
  const busy = busyAnswer(status, body);
  if (busy) return new ShopBusy(busy);
  if (status === 429) {
    const reset = headers.get('x-ratelimit-reset');
    const resetAt = reset === null || Number.isNaN(Date.parse(reset)) ? undefined : new Date(reset);
    const limit = Number(headers.get('x-ratelimit-limit'));
    return new RateLimited(String(record.error ?? 'Too many requests'), resetAt, Number.isInteger(limit) && limit > 0 ? limit : undefined);
  }
  if (status === 400 && record.error === 'Invalid request' && Array.isArray(record.details)) {
    return new InvalidRequest(record as InvalidRequestResponse);
  }
  if (status === 400 && isRecord(record.details) && typeof record.details.reason === 'string') {
    return new NotPayable(record as NotPayableResponse);
  }
  if (record.success === false && isRecord(record.error)) {
    const failure = record as CheckoutFailureResponse;
    return new ServiceError(failure.error.message, status, failure.error.code, failure.error.details);
  }
  const message = typeof record.error === 'string' ? record.error : `Unexpected answer (HTTP ${status})`;
  return new ServiceError(message, status, 'UNEXPECTED_RESPONSE');
}

export function createCheckoutClient(options: CheckoutClientOptions): CheckoutClient {
  const baseUrl = options.baseUrl.replace(/\/+$/, '');

  async function post<Result>(path: string, input: unknown, call: CallOptions = {}): Promise<Result> {
    try {
      return await postOnce<Result>(path, input, call);
    } catch (error) {
      const shortWait = error instanceof ShopBusy && error.retryAfterSeconds <= LONGEST_AUTOMATIC_WAIT_SECONDS;
      if (!shortWait || options.retryWhenBusy === false) throw error;
      await waitFor(error.retryAfterSeconds * 1000, call.signal);
      return postOnce<Result>(path, input, call);
    }
  }

  async function postOnce<Result>(path: string, input: unknown, call: CallOptions): Promise<Result> {
    // Resolved per call, so a fetch installed after the client was made (test doubles, polyfills) is used.
    const fetchImpl = options.fetch ?? globalThis.fetch;
    let response: Response;
    try {
      response = await fetchImpl(`${baseUrl}${path}`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
        body: JSON.stringify(input),
        signal: call.signal,
      });
    } catch (error) {
      if (call.signal?.aborted) throw error;
      throw new ServiceError('The checkout service could not be reached', undefined, 'NETWORK_ERROR', error);
    }
    let body: unknown;
    try {
      body = await response.json();
    } catch {
      body = undefined;
    }
    if (response.ok && isRecord(body) && body.success === true) return body as Result;
    throw errorFor(response.status, response.headers, body);
  }

  return {
    createPaymentIntent: (input, call) => post<PaymentIntent>('/api/payment-intent', input, call),
    submitOrder: (input, call) => post<SubmittedOrder>('/api/submit-order', input, call),
    shippingRates: (input, call) => post<ShippingRates>('/api/express-checkout/shipping-rates', input, call),
    chooseShippingRate: (input, call) => post<ChosenShippingRate>('/api/express-checkout/shipping-rate', input, call),
  };
}
