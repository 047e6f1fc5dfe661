/**
 * Route wrappers: every route handler is one of these around a use case in lib/.
 *
 * The wrapper owns the spec's processing order up to the use case (rate limit,
 * origin, body), turns every error into the endpoint's response through
 * lib/http/errors.ts, and writes one JSON log line per request with route,
 * status, duration and the order or event id, never a body or a header value.
 * Every response, errors and preflights included, carries the request's
 * `x-request-id`, and every log line written while handling it names it.
 */
import type { z } from 'zod';
import { getConfig } from '@/lib/config';
import { assertCronAuthorized } from '@/lib/cron/auth';
import { RunBudget } from '@/lib/cron/budget';
import { ConfigError, InvalidRequestError, RateLimitedError, ServiceError, ServiceNotConfiguredError, StoreBusyError, UnauthorizedError } from '@/lib/errors';
import { CHECKOUT_BODY_LIMIT, parseJson, readBodyText } from '@/lib/http/body';
import { clientIp } from '@/lib/http/client-ip';
import {
  checkoutErrorResponse,
  cronErrorResponse,
  storeCallbackErrorResponse,
  type CheckoutErrorProfile,
  type ErrorResponse,
} from '@/lib/http/errors';
import { allowedOrigin, assertAllowedOrigin, corsHeaders, preflightResponse } from '@/lib/http/origin';
import { log, REQUEST_ID_HEADER, requestIdFrom, withLogScope } from '@/lib/log';
import { deferRateLimitHit, settlePendingRateLimit, withRateLimitScope } from '@/lib/security/pending-rate-limit';
import type { RateLimitRule } from '@/lib/security/rate-limit';
import { STORE_SIGNATURE_HEADER, storeSignatureProblem } from '@/lib/security/store-signature';
import { getServices, type Services } from '@/lib/services';
import { withStoreCaller, type StoreCaller } from '@/lib/store/slots';
import { annotateSpan, withSpan } from '@/lib/telemetry';
import { REQUEST_BUDGET_TIMEOUTS, withRequestDeadline } from '@/lib/upstream/budget';

/** What a handler learns along the way, for the request's log line. */
export interface RequestContext {
  orderId?: number;
  eventId?: string;
  eventType?: string;
  outcome?: string;
}

interface RunOptions {
  route: string;
  request: Request;
  toErrorResponse: (error: unknown, showDetails: boolean) => ErrorResponse;
  headers?: Record<string, string>;
  /**
   * The deadline of the request's upstream calls, when not the default 3 × UPSTREAM_TIMEOUT_MS:
   * a cron run lasts up to its maxDuration and gives each unit of work its own deadline.
   */
  upstreamBudgetMs?: number;
  /** Whose slots its store calls take (lib/store/slots.ts): the webhooks' unless said. */
  storeCaller?: StoreCaller;
}

interface HandlerResult {
  status?: number;
  body: unknown;
}

function json(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return Response.json(body, { status, headers: { 'Cache-Control': 'no-store', ...headers } });
}

/** Runs a handler with error mapping, the request id and the request log line, in the request's span when tracing is on. */
export function runRoute(options: RunOptions, handler: (context: RequestContext) => Promise<HandlerResult>): Promise<Response> {
  return withSpan(`request ${options.route}`, { 'http.route': options.route }, () => handleRequest(options, handler), (response) =>
    response.status >= 500 ? 'error' : 'ok',
  );
}

async function handleRequest(
  options: RunOptions,
  handler: (context: RequestContext) => Promise<HandlerResult>,
): Promise<Response> {
  const requestId = requestIdFrom(options.request.headers);
  const response = await withLogScope({ requestId, route: options.route }, () => runScoped(options, handler));
  response.headers.set(REQUEST_ID_HEADER, requestId);
  return response;
}

async function runScoped(options: RunOptions, handler: (context: RequestContext) => Promise<HandlerResult>): Promise<Response> {
  const started = performance.now();
  const context: RequestContext = {};
  let status: number;
  let response: Response;
  let errorKind: string | undefined;
  try {
    const result = await withStoreCaller(options.storeCaller ?? 'webhook', () =>
      withRequestDeadline(options.upstreamBudgetMs ?? requestBudgetMs(), () =>
        withRateLimitScope(() => settlingRateLimit(() => handler(context))),
      ),
    );
    status = result.status ?? 200;
    response = json(status, result.body, options.headers);
  } catch (error) {
    const showDetails = safeIsDevelopment();
    // The full configuration message (variable names, never values) goes to the log below.
    const answerable = error instanceof ConfigError ? new ServiceNotConfiguredError('The service configuration is invalid') : error;
    const mapped = options.toErrorResponse(answerable, showDetails);
    status = mapped.status;
    // A call refused at the cap on store calls is the shielding at work, not a store failure.
    errorKind = error instanceof StoreBusyError ? 'store_busy' : error instanceof ServiceError ? error.kind : error instanceof ConfigError ? 'config' : 'unexpected';
    response = json(status, mapped.body, { ...options.headers, ...mapped.headers });
    if (errorKind === 'unexpected' || errorKind === 'config') {
      // Logged by name only: an unknown error's message may quote upstream data.
      log.error('request.unexpected_error', {
        route: options.route,
        error: error instanceof Error ? error.name : typeof error,
        message: error instanceof ConfigError ? error.message : undefined,
      });
    }
  }
  log[status >= 500 && errorKind !== 'store_busy' ? 'error' : status >= 400 ? 'warn' : 'info']('request', {
    route: options.route,
    status,
    durationMs: Math.round(performance.now() - started),
    orderId: context.orderId,
    eventId: context.eventId,
    eventType: context.eventType,
    outcome: context.outcome,
    error: errorKind,
  });
  annotateSpan({
    'http.response.status_code': status,
    'checkout.order_id': context.orderId,
    'checkout.event_id': context.eventId,
    'checkout.event_type': context.eventType,
    'checkout.result': context.outcome,
    'error.type': errorKind,
  });
  return response;
}

/** Every upstream call of one request ends within this (docs/contract.md "Time bounds"). */
function requestBudgetMs(): number {
  try {
    return REQUEST_BUDGET_TIMEOUTS * getConfig().upstreamTimeoutMs;
  } catch {
    return REQUEST_BUDGET_TIMEOUTS * 10_000;
  }
}

function safeIsDevelopment(): boolean {
  try {
    return getConfig().isDevelopment;
  } catch {
    return process.env.NODE_ENV === 'development';
  }
}

/**
 * Counts the request against the endpoint's limit; RateLimitedError when it is over. With Redis the
 * hit is noted and counted by the request's first Redis script (lib/security/pending-rate-limit.ts);
 * `settlingRateLimit` counts it on the way out for a request that ran none.
 */
export async function enforceRateLimit(services: Services, rule: RateLimitRule, headers: Headers): Promise<void> {
  const client = clientIp(headers, services.config.trustProxyHops, services.config.clientIpHeader);
  const pending = services.rateLimiter.defer?.(rule, client);
  if (pending && deferRateLimitHit(pending)) return;
  const decision = await services.rateLimiter.hit(rule, client);
  if (!decision.allowed) throw new RateLimitedError(decision);
}

/**
 * A request whose hit no Redis script counted counts it now, whatever the handler answered: over the
 * limit, the answer is 429, as if the hit had been counted first (docs/contract.md#spec-8). Nothing before the first
 * script reaches an upstream (lib/security/pending-rate-limit.ts says how), so a 429 found here
 * follows CPU work only: origin, body, token or signature checks.
 */
async function settlingRateLimit<T>(handler: () => Promise<T>): Promise<T> {
  let result: T;
  try {
    result = await handler();
  } catch (error) {
    try {
      await settlePendingRateLimit();
    } catch (settleError) {
      if (settleError instanceof RateLimitedError) throw settleError;
    }
    throw error;
  }
  await settlePendingRateLimit();
  return result;
}

export interface CheckoutRouteOptions<Input> {
  route: string;
  rule: RateLimitRule;
  profile: CheckoutErrorProfile;
  schema: z.ZodType<Input>;
  handle: (input: Input, services: Services, context: RequestContext) => Promise<unknown>;
}

/**
 * The storefront endpoints (docs/contract.md#spec-4-1, docs/contract.md#spec-4-2): rate limit → origin → body →
 * use case, answering the CORS preflight too.
 */
export function checkoutRoute<Input>(options: CheckoutRouteOptions<Input>) {
  async function POST(request: Request): Promise<Response> {
    let origin: string | undefined;
    try {
      origin = allowedOrigin(request.headers, getConfig().allowedOrigins);
    } catch {
      origin = undefined;
    }
    return runRoute(
      {
        route: options.route,
        request,
        toErrorResponse: (error, showDetails) => checkoutErrorResponse(error, options.profile, showDetails),
        headers: corsHeaders(origin),
        storeCaller: 'checkout',
      },
      async (context) => {
        const services = getServices();
        await enforceRateLimit(services, options.rule, request.headers);
        assertAllowedOrigin(request.headers, services.config.allowedOrigins);
        const raw = parseJson(await readBodyText(request, CHECKOUT_BODY_LIMIT));
        const parsed = options.schema.safeParse(raw);
        if (!parsed.success) throw new InvalidRequestError(parsed.error.issues);
        return { body: await options.handle(parsed.data, services, context) };
      },
    );
  }

  async function OPTIONS(request: Request): Promise<Response> {
    let response: Response;
    try {
      response = preflightResponse(request.headers, getConfig().allowedOrigins);
    } catch {
      response = new Response(null, { status: 403, headers: { Vary: 'Origin' } });
    }
    response.headers.set(REQUEST_ID_HEADER, requestIdFrom(request.headers));
    return response;
  }

  return { POST, OPTIONS };
}

/**
 * The cron routes (GET, Vercel Cron's Bearer CRON_SECRET): 401 without it, or
 * when it is unset (lib/cron/auth.ts). The run lasts up to the function's maxDuration (its budget
 * stops starting work before then), and each unit of work inside sets its own
 * upstream deadline (lib/cron/budget.ts).
 */
export function cronRoute(route: string, maxDurationSeconds: number, run: (services: Services, budget: RunBudget) => Promise<unknown>) {
  return async function GET(request: Request): Promise<Response> {
    const budget = new RunBudget(maxDurationSeconds * 1000);
    const options = { route, request, toErrorResponse: cronErrorResponse, upstreamBudgetMs: maxDurationSeconds * 1000, storeCaller: 'background' as const };
    return runRoute(options, async () => {
      const services = getServices();
      assertCronAuthorized(request.headers, services.config.cronSecret);
      return { body: await run(services, budget) };
    });
  };
}

export const STORE_CALLBACKS_NOT_CONFIGURED = 'STORE_CALLBACK_SECRET is not set: the service takes no calls from the store';

export interface StoreCallbackRouteOptions<Input> {
  route: string;
  schema: z.ZodType<Input>;
  handle: (input: Input, services: Services, context: RequestContext) => Promise<unknown>;
}

/**
 * The store's calls (docs/decisions.md#d15), POST from the companion plugin: 503 and nothing read without
 * STORE_CALLBACK_SECRET → raw body (32 KiB at most) → signature of its exact bytes (401) → JSON and
 * schema (400) → use case. No per-IP rate limit: every call is signed by the shop itself, and one
 * that is not costs an HMAC and no upstream call.
 */
export function storeCallbackRoute<Input>(options: StoreCallbackRouteOptions<Input>) {
  return async function POST(request: Request): Promise<Response> {
    return runRoute({ route: options.route, request, toErrorResponse: storeCallbackErrorResponse }, async (context) => {
      const services = getServices();
      const secret = services.config.storeCallbackSecret;
      if (!secret) throw new ServiceNotConfiguredError(STORE_CALLBACKS_NOT_CONFIGURED);
      const rawBody = await readBodyText(request, CHECKOUT_BODY_LIMIT);
      const problem = storeSignatureProblem(request.headers.get(STORE_SIGNATURE_HEADER), rawBody, secret);
      if (problem !== undefined) {
        context.outcome = `signature_${problem}`;
        throw new UnauthorizedError();
      }
      const parsed = options.schema.safeParse(parseJson(rawBody));
      if (!parsed.success) throw new InvalidRequestError(parsed.error.issues);
      return { body: await options.handle(parsed.data, services, context) };
    });
  };
}
