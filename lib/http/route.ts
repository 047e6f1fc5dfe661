/**
 * The route wrapper under every route family: the request's span and scope (lib/request-scope.ts), error mapping,
 * its `x-request-id` and its one log line. Knows nothing of checkout, webhooks or cron.
 */
import { configIfValid, UPSTREAM_TIMEOUT_DEFAULT_MS, type Config, type StoreCaller } from '@/lib/config';
import { ConfigError, ServiceError, ServiceNotConfiguredError, StoreBusyError } from '@/lib/errors';
import type { ErrorResponse } from '@/lib/http/errors';
import { log, REQUEST_ID_HEADER, requestIdFrom, type RequestContext } from '@/lib/log';
import { inRequestScope, requestScopeOf, runRequestWork, type RequestNotes } from '@/lib/request-scope';
import { annotateSpan, withSpan } from '@/lib/telemetry';
import { REQUEST_BUDGET_TIMEOUTS } from '@/lib/upstream/budget';

export interface RunOptions {
  route: string;
  request: Request;
  toErrorResponse: (error: unknown, showDetails: boolean) => ErrorResponse;
  headers?: Record<string, string>;
  /** Whose store slots its calls take. */
  storeCaller: StoreCaller;
  /** A cron run lasts up to its maxDuration, not the default 3 × UPSTREAM_TIMEOUT_MS. */
  upstreamBudgetMs?: number;
}

export interface HandlerResult {
  status?: number;
  body: unknown;
}

/** Answered 500 but no failure of ours, so alerting on `error` pages no one. */
const NOT_OUR_FAILURE: ReadonlySet<string> = new Set(['store_busy', 'invalid_token', 'invalid_origin']);

function json(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return Response.json(body, { status, headers: { 'Cache-Control': 'no-store', ...headers } });
}

export function runRoute(options: RunOptions, handler: (context: RequestContext) => Promise<HandlerResult>): Promise<Response> {
  return withSpan(`request ${options.route}`, { 'http.route': options.route }, () => answer(options, handler), (response) =>
    response.status >= 500 ? 'error' : 'ok',
  );
}

async function answer(options: RunOptions, handler: (context: RequestContext) => Promise<HandlerResult>): Promise<Response> {
  const requestId = requestIdFrom(options.request.headers);
  // Invalid, the configuration leaves the defaults here, and the handler's first use of it answers not_configured.
  const config: Config | undefined = configIfValid();
  // Every upstream call of one request ends within this (docs/contract.md "Time bounds").
  const budgetMs = options.upstreamBudgetMs ?? REQUEST_BUDGET_TIMEOUTS * (config?.upstreamTimeoutMs ?? UPSTREAM_TIMEOUT_DEFAULT_MS);
  const scope = requestScopeOf({ requestId, route: options.route, storeCaller: options.storeCaller }, Date.now() + budgetMs);
  const response = await inRequestScope(scope, () => respond(options, config, scope.notes, handler));
  response.headers.set(REQUEST_ID_HEADER, requestId);
  return response;
}

async function respond(
  options: RunOptions,
  config: Config | undefined,
  notes: RequestNotes,
  handler: (context: RequestContext) => Promise<HandlerResult>,
): Promise<Response> {
  const started = performance.now();
  const context: RequestContext = {};
  let status: number;
  let response: Response;
  let errorKind: string | undefined;
  try {
    const result = await runRequestWork(notes, () => handler(context));
    status = result.status ?? 200;
    response = json(status, result.body, options.headers);
  } catch (error) {
    const showDetails = config?.isDevelopment ?? process.env.NODE_ENV === 'development';
    // The full configuration message (variable names, never values) goes to the log below.
    const answerable = error instanceof ConfigError ? new ServiceNotConfiguredError('The service configuration is invalid') : error;
    const mapped = options.toErrorResponse(answerable, showDetails);
    status = mapped.status;
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
