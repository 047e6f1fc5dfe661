/**
 * The route families over one wrapper (the request's span and scope, error mapping, `x-request-id`, one log line):
 * the storefront's checkout, the providers' webhooks, the store's signed calls, the crons and the health check.
 */
import type { z } from 'zod';
import { runBudget, type Budget } from '@/lib/cron/budget';
import { configIfValid, UPSTREAM_TIMEOUT_DEFAULT_MS, type StoreCaller } from '@/lib/config';
import { ConfigError, InvalidRequestError, ServiceError, ServiceNotConfiguredError, StoreBusyError, UnauthorizedError } from '@/lib/errors';
import { CHECKOUT_BODY_LIMIT, parseJson, readBodyText, WEBHOOK_BODY_LIMIT } from '@/lib/http/body';
import type { CheckoutErrorProfile, ErrorResponse } from '@/lib/http/errors';
import { checkoutErrorResponse, cronErrorResponse, storeCallbackErrorResponse } from '@/lib/http/errors';
import { allowedOrigin, assertAllowedOrigin, corsHeaders, preflightResponse } from '@/lib/http/origin';
import { log, REQUEST_ID_HEADER, requestIdFrom, type RequestContext } from '@/lib/log';
import { inRequestScope, requestScopeOf, runRequestWork } from '@/lib/request-scope';
import { secretMatches } from '@/lib/security/secret-match';
import { STORE_SIGNATURE_HEADER, storeSignatureProblem } from '@/lib/security/store-signature';
import { getServices, type Services } from '@/lib/services';
import { countRateLimitHit, type RateLimitRule } from '@/lib/shared-state/rate-limit';
import { annotateSpan, withSpan } from '@/lib/telemetry';
import { REQUEST_BUDGET_TIMEOUTS } from '@/lib/upstream/budget';

interface RunOptions {
  route: string;
  request: Request;
  toErrorResponse: (error: unknown, showDetails: boolean) => ErrorResponse;
  headers?: Record<string, string>;
  /** Whose store slots its calls take. */
  storeCaller: StoreCaller;
  /** A cron run lasts up to its maxDuration, not the default 3 × UPSTREAM_TIMEOUT_MS. */
  upstreamBudgetMs?: number;
}

interface HandlerResult {
  status?: number;
  body: unknown;
}

type Handler = (context: RequestContext) => Promise<HandlerResult>;

/** Answered 500 but no failure of ours, so alerting on `error` pages no one. */
const NOT_OUR_FAILURE: ReadonlySet<string> = new Set(['store_busy', 'invalid_token', 'invalid_origin']);

function runRoute(options: RunOptions, handler: Handler): Promise<Response> {
  const span = { 'http.route': options.route };
  return withSpan(`request ${options.route}`, span, async () => {
    const requestId = requestIdFrom(options.request.headers);
    // Invalid, the configuration leaves the defaults here, and the handler's first use of it answers not_configured.
    const config = configIfValid();
    // Every upstream call of one request ends within this (docs/contract.md "Time bounds").
    const timeoutMs = config?.upstreamTimeoutMs ?? UPSTREAM_TIMEOUT_DEFAULT_MS;
    const budgetMs = options.upstreamBudgetMs ?? REQUEST_BUDGET_TIMEOUTS * timeoutMs;
    const scope = requestScopeOf({ requestId, route: options.route, storeCaller: options.storeCaller }, Date.now() + budgetMs);
    const showDetails = config?.isDevelopment ?? process.env.NODE_ENV === 'development';
    const work = (context: RequestContext) => runRequestWork(scope.notes, () => handler(context));
    const response = await inRequestScope(scope, () => respond(options, showDetails, work));
    response.headers.set(REQUEST_ID_HEADER, requestId);
    return response;
  }, (response) => (response.status >= 500 ? 'error' : 'ok'));
}

async function respond(options: RunOptions, showDetails: boolean, handler: Handler): Promise<Response> {
  const started = performance.now();
  const context: RequestContext = {};
  let answer: HandlerResult & { headers?: Record<string, string> };
  let errorKind: string | undefined;
  try {
    answer = await handler(context);
  } catch (error) {
    // The full configuration message (variable names, never values) goes to the log below.
    const answerable = error instanceof ConfigError ? new ServiceNotConfiguredError('The service configuration is invalid') : error;
    answer = options.toErrorResponse(answerable, showDetails);
    errorKind = error instanceof StoreBusyError ? 'store_busy' : error instanceof ServiceError ? error.kind : error instanceof ConfigError ? 'config' : 'unexpected';
    if (errorKind === 'unexpected' || errorKind === 'config') {
      // Logged by name only: an unknown error's message may quote upstream data.
      log.error('request.unexpected_error', {
        route: options.route,
        error: error instanceof Error ? error.name : typeof error,
        message: error instanceof ConfigError ? error.message : undefined,
      });
    }
  }
  const status = answer.status ?? 200;
  const response = Response.json(answer.body, { status, headers: { 'Cache-Control': 'no-store', ...options.headers, ...answer.headers } });
  log[status >= 500 && !NOT_OUR_FAILURE.has(errorKind ?? '') ? 'error' : status >= 400 ? 'warn' : 'info']('request', {
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

/** What a family with a JSON body declares: the body's schema and the use case it goes to. */
interface JsonRouteOptions<Input> {
  route: string;
  schema: z.ZodType<Input>;
  handle: (input: Input, services: Services, context: RequestContext) => Promise<unknown>;
}

function parsedInput<Input>(schema: z.ZodType<Input>, rawBody: string): Input {
  const parsed = schema.safeParse(parseJson(rawBody));
  if (!parsed.success) throw new InvalidRequestError(parsed.error.issues);
  return parsed.data;
}

/**
 * The storefront endpoints (docs/contract.md#spec-4-1, docs/contract.md#spec-4-2): rate limit → origin → body →
 * use case, answering the CORS preflight too.
 */
export function checkoutRoute<Input>(options: JsonRouteOptions<Input> & { rule: RateLimitRule; profile: CheckoutErrorProfile }) {
  async function POST(request: Request): Promise<Response> {
    // An invalid configuration allows no origin; the handler answers not_configured.
    const origin = allowedOrigin(request.headers, configIfValid()?.allowedOrigins ?? []);
    const toErrorResponse = (error: unknown, showDetails: boolean) => checkoutErrorResponse(error, options.profile, showDetails);
    const run = { route: options.route, request, toErrorResponse, headers: corsHeaders(origin), storeCaller: 'checkout' as const };
    return runRoute(run, async (context) => {
      const services = getServices();
      await countRateLimitHit(services.rateLimiter, options.rule, request.headers, services.config);
      assertAllowedOrigin(request.headers, services.config.allowedOrigins);
      const input = parsedInput(options.schema, await readBodyText(request, CHECKOUT_BODY_LIMIT));
      return { body: await options.handle(input, services, context) };
    });
  }

  async function OPTIONS(request: Request): Promise<Response> {
    const response = preflightResponse(request.headers, configIfValid()?.allowedOrigins ?? []);
    response.headers.set(REQUEST_ID_HEADER, requestIdFrom(request.headers));
    return response;
  }

  return { POST, OPTIONS };
}

/** A webhook use case's answer other than 200 (ShipStation V2's 404 and 400 for an unsigned or badly signed delivery). */
export class WebhookAnswer {
  constructor(
    readonly status: number,
    readonly body: unknown,
  ) {}
}

/**
 * The providers' webhooks, POST /api/cardprovider/webhook and /api/shipping/webhook: rate limit → the headers' check
 * (`check`, whose result goes to `handle`) before a byte of the body is read → raw body (512 KiB at most) → use case.
 */
export function webhookRoute<Checked>(options: {
  route: string;
  rule: RateLimitRule;
  /** The provider's answers to errors (lib/http/errors.ts): each provider retries on different statuses. */
  toErrorResponse: (error: unknown, showDetails: boolean) => ErrorResponse;
  check: (request: Request, services: Services) => Checked;
  handle: (rawBody: string, checked: Checked, services: Services, context: RequestContext) => Promise<unknown>;
}) {
  return async function POST(request: Request): Promise<Response> {
    const run = { route: options.route, request, toErrorResponse: options.toErrorResponse, storeCaller: 'webhook' as const };
    return runRoute(run, async (context) => {
      const services = getServices();
      await countRateLimitHit(services.rateLimiter, options.rule, request.headers, services.config);
      const checked = options.check(request, services);
      const rawBody = await readBodyText(request, WEBHOOK_BODY_LIMIT);
      const result = await options.handle(rawBody, checked, services, context);
      return result instanceof WebhookAnswer ? { status: result.status, body: result.body } : { body: result };
    });
  };
}

/**
 * The store's calls, POST /api/store/* from the companion plugin (docs/decisions.md#d15): 503 without
 * STORE_CALLBACK_SECRET → raw body (32 KiB at most) → signature of the method, path and exact bytes (401) → strict
 * schema (400) → use case. No per-IP rate limit: an unsigned call costs an HMAC and no upstream call.
 */
export function storeCallbackRoute<Input>(options: JsonRouteOptions<Input>) {
  return async function POST(request: Request): Promise<Response> {
    // A refund or a capture records a payment fact: it shares the webhooks' store slots, kept from a rush of checkouts.
    const run = { route: options.route, request, toErrorResponse: storeCallbackErrorResponse, storeCaller: 'webhook' as const };
    return runRoute(run, async (context) => {
      const services = getServices();
      const secret = services.config.storeCallbackSecret;
      if (!secret) throw new ServiceNotConfiguredError('STORE_CALLBACK_SECRET is not set: the service takes no calls from the store');
      const rawBody = await readBodyText(request, CHECKOUT_BODY_LIMIT);
      // The path the request came to, not a name the route declares: the signature names what this handler does.
      const call = { method: request.method, path: new URL(request.url).pathname, rawBody };
      const problem = storeSignatureProblem(request.headers.get(STORE_SIGNATURE_HEADER), call, secret);
      if (problem !== undefined) {
        context.outcome = `signature_${problem}`;
        throw new UnauthorizedError();
      }
      return { body: await options.handle(parsedInput(options.schema, rawBody), services, context) };
    });
  };
}

/**
 * 401 unless the request carries `Authorization: Bearer <CRON_SECRET>` (what Vercel Cron sends), compared in constant
 * time. Without CRON_SECRET nothing runs, answered like a wrong secret: the operator learns it from the log.
 */
function assertCronAuthorized(headers: Headers, secret: string | undefined): void {
  if (!secret) {
    log.warn('cron.secret_unset', { message: 'CRON_SECRET is not set: the cron routes refuse to run' });
    throw new UnauthorizedError();
  }
  const match = /^Bearer\s+(.+)$/i.exec((headers.get('authorization') ?? '').trim());
  if (!match?.[1] || !secretMatches(match[1], secret)) throw new UnauthorizedError();
}

/** GET /api/cron/*: a run lasts up to the function's maxDuration; each unit of work sets its own upstream deadline (lib/cron/budget.ts). */
export function cronRoute(route: string, maxDurationSeconds: number, run: (services: Services, budget: Budget) => Promise<unknown>) {
  return async function GET(request: Request): Promise<Response> {
    const budget = runBudget(maxDurationSeconds * 1000);
    const upstreamBudgetMs = maxDurationSeconds * 1000;
    return runRoute({ route, request, toErrorResponse: cronErrorResponse, upstreamBudgetMs, storeCaller: 'background' }, async () => {
      const services = getServices();
      assertCronAuthorized(request.headers, services.config.cronSecret);
      return { body: await run(services, budget) };
    });
  };
}

/**
 * GET /api/health: `shallow` answers without an upstream call to anyone; with an Authorization header the caller must
 * hold CRON_SECRET (401 otherwise), and `deep` runs with the crons' store slots and error answers.
 */
export function healthRoute(route: string, checks: { shallow: () => unknown; deep: (services: Services) => Promise<HandlerResult> }) {
  return async function GET(request: Request): Promise<Response> {
    return runRoute({ route, request, toErrorResponse: cronErrorResponse, storeCaller: 'background' }, async () => {
      if (!request.headers.has('authorization')) return { body: checks.shallow() };
      const services = getServices();
      assertCronAuthorized(request.headers, services.config.cronSecret);
      return checks.deep(services);
    });
  };
}
