/**
 * Traces (lib/telemetry.ts): off by default without loading OpenTelemetry at
 * all; on, a request through the real route handler is one span with route,
 * status and order id, and each store and card provider call is a child span
 * with its outcome, with no customer data in any attribute. An in-memory
 * exporter stands in for the OTLP one here; tests/e2e/traces.test.ts exports
 * over OTLP from the built service.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { context, ROOT_CONTEXT, trace, type Context, type ContextManager } from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { TEST_STOREFRONT_ORIGIN, useTestEnv } from '../support/env';
import { useProviders } from '../support/providers';
import { noRedis, REDIS_SKIP_REASON, REDIS_URL, testPrefix } from '../support/redis';
import { postJson, tokenFor } from '../support/requests';

const providers = useProviders();

beforeEach(() => {
  useTestEnv();
  providers.reset();
});

afterEach(() => {
  delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
  vi.doUnmock('@opentelemetry/api');
  vi.resetModules();
});

describe('tracing off (no OTEL_EXPORTER_OTLP_ENDPOINT)', () => {
  it('runs the work without ever loading an OpenTelemetry module', async () => {
    vi.resetModules();
    vi.doMock('@opentelemetry/api', () => {
      throw new Error('OpenTelemetry was loaded with tracing off');
    });
    const telemetry = await import('@/lib/telemetry');
    expect(telemetry.tracingEnabled()).toBe(false);
    expect(await telemetry.withSpan('work', {}, async () => 'done')).toBe('done');
    telemetry.annotateSpan({ 'checkout.order_id': 1 });
    // The real request path too: a checkout call goes through the wrapper and the store and card clients.
    providers.woo.seed({ id: 201, lines: [{ total: '10.00' }] });
    const { POST } = await import('@/app/api/payment-intent/route');
    expect((await POST(postJson('/api/payment-intent', { token: await tokenFor(201) }))).status).toBe(200);
  });

  it('adds no promise of its own around the work or an upstream call, and rejects a work that throws at once', async () => {
    const telemetry = await import('@/lib/telemetry');
    const work = Promise.resolve('done');
    expect(telemetry.withSpan('work', {}, () => work)).toBe(work);
    // Outside a request there is no deferred rate-limit hit to count first.
    expect(telemetry.traceCall('store', 'get order', () => work)).toBe(work);
    // A work that throws before its promise rejects, as it did when these were async functions.
    const thrown = new Error('thrown before any promise');
    const fail = (): Promise<string> => {
      throw thrown;
    };
    await expect(telemetry.withSpan('work', {}, fail)).rejects.toBe(thrown);
    await expect(telemetry.traceCall('store', 'get order', fail)).rejects.toBe(thrown);
  });
});

/** What @vercel/otel provides in the service: a context manager on AsyncLocalStorage, so spans nest across awaits. */
class AsyncLocalContextManager implements ContextManager {
  private readonly storage = new AsyncLocalStorage<Context>();
  active(): Context {
    return this.storage.getStore() ?? ROOT_CONTEXT;
  }
  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(ctx: Context, fn: F, thisArg?: ThisParameterType<F>, ...args: A): ReturnType<F> {
    return this.storage.run(ctx, () => fn.call(thisArg, ...args));
  }
  bind<T>(_ctx: Context, target: T): T {
    return target;
  }
  enable(): this {
    return this;
  }
  disable(): this {
    this.storage.disable();
    return this;
  }
}

describe('tracing on', () => {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });

  beforeAll(() => {
    context.setGlobalContextManager(new AsyncLocalContextManager());
    trace.setGlobalTracerProvider(provider);
  });

  afterAll(async () => {
    await provider.shutdown();
    trace.disable();
    context.disable();
  });

  beforeEach(() => {
    exporter.reset();
    process.env.OTEL_EXPORTER_OTLP_ENDPOINT = 'http://127.0.0.1:4318';
  });

  it('a checkout request is one span with route, status and order id; its store and card calls are its children', async () => {
    providers.woo.seed({ id: 202, lines: [{ total: '10.00' }], billing: { email: 'kept-out@example.com' } });
    const { POST } = await import('@/app/api/payment-intent/route');
    const response = await POST(
      postJson('/api/payment-intent', {
        token: await tokenFor(202),
        billing_address: { first_name: 'Secret', last_name: 'Customer', address_1: '1 Private Lane', country: 'GB' },
        contact_info: { email: 'kept-out@example.com', phone: '+44 20 7946 0000' },
      }),
    );
    expect(response.status).toBe(200);

    const spans = exporter.getFinishedSpans();
    const request = spans.find((span) => span.name === 'request /api/payment-intent')!;
    expect(request.attributes).toMatchObject({
      'http.route': '/api/payment-intent',
      'http.response.status_code': 200,
      'checkout.order_id': 202,
      'checkout.outcome': 'ok',
    });
    const children = spans.filter((span) => span.parentSpanContext?.spanId === request.spanContext().spanId);
    expect(children.map((span) => [span.name, span.attributes['checkout.outcome']])).toEqual([
      ['store get order', 'ok'],
      ['card create payment intent', 'ok'],
      ['store update order', 'ok'],
    ]);
    expect(children.every((span) => span.spanContext().traceId === request.spanContext().traceId)).toBe(true);

    const everyValue = JSON.stringify(spans.map((span) => span.attributes));
    for (const personal of ['kept-out@example.com', 'Secret', 'Private Lane', '+44', TEST_STOREFRONT_ORIGIN, 'eyJ']) {
      expect(everyValue).not.toContain(personal);
    }
  });

  it.skipIf(noRedis)(`with REDIS_URL set, each Redis call is a child span naming its operation, never a key${noRedis ? ` (skipped: ${REDIS_SKIP_REASON})` : ''}`, async () => {
    const prefix = testPrefix('traces');
    useTestEnv({ REDIS_URL, REDIS_KEY_PREFIX: prefix });
    providers.woo.seed({ id: 204, lines: [{ total: '10.00' }] });
    const { POST } = await import('@/app/api/payment-intent/route');
    const ip = '203.0.113.77';
    expect((await POST(postJson('/api/payment-intent', { token: await tokenFor(204) }, { ip }))).status).toBe(200);

    const spans = exporter.getFinishedSpans();
    const request = spans.find((span) => span.name === 'request /api/payment-intent')!;
    const children = spans.filter((span) => span.parentSpanContext?.spanId === request.spanContext().spanId);
    const redis = children.filter((span) => span.name.startsWith('redis '));
    // The rate limit rides in the lock's script (lib/shared-state/request-redis.ts): two calls, two spans.
    expect(redis.map((span) => [span.name, span.attributes['checkout.outcome']])).toEqual([
      ['redis lock_acquire', 'ok'],
      ['redis lock_release', 'ok'],
    ]);
    for (const span of redis) {
      expect(Object.keys(span.attributes).sort()).toEqual(['checkout.operation', 'checkout.outcome', 'checkout.upstream']);
      expect(span.attributes['checkout.upstream']).toBe('redis');
    }
    // Keys hold client IPs and order ids: none reaches a Redis span.
    const redisValues = JSON.stringify(redis.map((span) => [span.name, span.attributes]));
    for (const kept of [ip, prefix, '204']) expect(redisValues).not.toContain(kept);
  });

  it('a failing upstream call ends its span as an error with its kind, and a 500 marks the request span', async () => {
    providers.woo.seed({ id: 203, lines: [{ total: '10.00' }] });
    providers.failCard('POST', /\/v1\/payment_intents$/, 400, 'invalid_request_error', 'amount_too_small');
    const { POST } = await import('@/app/api/payment-intent/route');
    expect((await POST(postJson('/api/payment-intent', { token: await tokenFor(203) }))).status).toBe(500);

    const spans = exporter.getFinishedSpans();
    const card = spans.find((span) => span.name === 'card create payment intent')!;
    expect(card.attributes['checkout.outcome']).toBe('error');
    expect(card.status.code).toBe(2); // SpanStatusCode.ERROR
    const request = spans.find((span) => span.name === 'request /api/payment-intent')!;
    expect(request.attributes).toMatchObject({ 'http.response.status_code': 500, 'checkout.outcome': 'error', 'checkout.order_id': 203 });
    expect(request.attributes['error.type']).toBeTypeOf('string');
  });
});
