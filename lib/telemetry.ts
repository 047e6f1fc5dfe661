/**
 * Spans for each request and upstream call, only with OTEL_EXPORTER_OTLP_ENDPOINT set; off, a string
 * check and no OpenTelemetry module loaded. Attributes are identifiers and outcomes only.
 */
import type * as OpenTelemetryApi from '@opentelemetry/api';
import { countRateLimitHitNow } from '@/lib/request-scope';

export type SpanAttributes = Record<string, string | number | boolean | undefined>;

let api: typeof OpenTelemetryApi | undefined;
let loading: Promise<typeof OpenTelemetryApi> | undefined;

const TRACER_NAME = 'checkout-payment-service';

export function tracingEnabled(): boolean {
  return Boolean(process.env.OTEL_EXPORTER_OTLP_ENDPOINT);
}

function definedAttributes(attributes: SpanAttributes): OpenTelemetryApi.Attributes {
  return Object.fromEntries(Object.entries(attributes).filter(([, value]) => value !== undefined)) as OpenTelemetryApi.Attributes;
}

/** What went wrong, by kind only: an error's message may quote upstream data. */
function errorType(error: unknown): string {
  if (error instanceof Error) {
    const kind = (error as { kind?: unknown }).kind;
    return typeof kind === 'string' ? `${error.name}:${kind}` : error.name;
  }
  return typeof error;
}

/**
 * `fn()` in a span; with tracing off `fn()`'s own promise, none of its own (each costs its async context in Next.js),
 * and a synchronous throw rejected as an async function would.
 */
export function withSpan<T>(
  name: string,
  attributes: SpanAttributes,
  fn: () => Promise<T>,
  outcomeOf: (result: T) => 'ok' | 'error' = () => 'ok',
): Promise<T> {
  if (tracingEnabled()) return inSpan(name, attributes, fn, outcomeOf);
  try {
    return fn();
  } catch (error) {
    return Promise.reject(error);
  }
}

async function inSpan<T>(name: string, attributes: SpanAttributes, fn: () => Promise<T>, outcomeOf: (result: T) => 'ok' | 'error'): Promise<T> {
  loading ??= import('@opentelemetry/api').then((module) => (api = module));
  const { trace, SpanStatusCode } = await loading;
  return trace.getTracer(TRACER_NAME).startActiveSpan(name, { attributes: definedAttributes(attributes) }, async (span) => {
    try {
      const result = await fn();
      const outcome = outcomeOf(result);
      span.setAttribute('checkout.outcome', outcome);
      if (outcome === 'error') span.setStatus({ code: SpanStatusCode.ERROR });
      return result;
    } catch (error) {
      span.setAttributes({ 'checkout.outcome': 'error', 'error.type': errorType(error) });
      span.setStatus({ code: SpanStatusCode.ERROR });
      throw error;
    } finally {
      span.end();
    }
  });
}

export function annotateSpan(attributes: SpanAttributes): void {
  if (!api) return;
  api.trace.getActiveSpan()?.setAttributes(definedAttributes(attributes));
}

/** An upstream call first counts its request's deferred rate-limit hit (lib/shared-state/rate-limit.ts): no 429 follows it. */
export function traceCall<T>(system: 'store' | 'card' | 'shipstation' | 'redis', operation: string, fn: () => Promise<T>): Promise<T> {
  const call = () => withSpan(`${system} ${operation}`, { 'checkout.upstream': system, 'checkout.operation': operation }, fn);
  const counting = system === 'redis' ? undefined : countRateLimitHitNow();
  return counting ? counting.then(call) : call();
}
