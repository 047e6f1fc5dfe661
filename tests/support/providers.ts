/**
 * msw handlers that put WooCommerce and Stripe behind the in-memory models of
 * scripts/stand-ins, so route tests exercise the real store and card clients
 * over HTTP. Every request is recorded for assertions on what was written
 * and sent; anything unhandled fails the test (onUnhandledRequest: 'error').
 */
import { delay, http, HttpResponse } from 'msw';
import { setupServer } from 'msw/node';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { StripeApiError, StripeModel, parseFormBody } from '@/scripts/stand-ins/stripe-model';
import { WooCommerceModel, WooError, type WooModelOptions } from '@/scripts/stand-ins/woocommerce-model';
import { TEST_CONSUMER_KEY, TEST_CONSUMER_SECRET, TEST_STORE_URL, TEST_STRIPE_KEY } from './env';

export interface RecordedCall {
  provider: 'store' | 'card';
  method: string;
  path: string;
  body: unknown;
  headers: Record<string, string>;
}

export interface Providers {
  woo: WooCommerceModel;
  stripe: StripeModel;
  calls: RecordedCall[];
  /** Calls to one provider, optionally filtered by method and path pattern. */
  callsTo(provider: 'store' | 'card', method?: string, path?: RegExp): RecordedCall[];
  /** The bodies of every order update sent to the store. */
  orderUpdates(orderId?: number): Record<string, unknown>[];
  /** Makes the next matching store calls fail with this status and WooCommerce code (once each). */
  failStore(method: string, path: RegExp, status: number, code: string, times?: number): void;
  /** Makes the next matching card calls fail with this Stripe error (once each). */
  failCard(method: string, path: RegExp, status: number, type: string, code: string, times?: number): void;
  /** Delays every store answer by this many milliseconds (to make concurrent requests overlap). */
  setStoreLatency(ms: number): void;
  /** Resets models, recordings, failures and latency (call it in each test file's beforeEach). */
  reset(options?: WooModelOptions): void;
}

interface Failure {
  method: string;
  path: RegExp;
  status: number;
  body: unknown;
  times: number;
}

const WOO_API = `${TEST_STORE_URL}/wp-json/wc/v3`;
const BRIDGE_API = `${TEST_STORE_URL}/wp-json/wc-checkout-bridge/v1`;
const STRIPE_API = 'https://api.stripe.com/v1';

function headerRecord(headers: Headers): Record<string, string> {
  const out: Record<string, string> = {};
  headers.forEach((value, key) => {
    out[key] = value;
  });
  return out;
}

export function createProviders(): { providers: Providers; server: ReturnType<typeof setupServer> } {
  const state = {
    woo: new WooCommerceModel(),
    stripe: new StripeModel(),
    calls: [] as RecordedCall[],
    failures: [] as (Failure & { provider: 'store' | 'card' })[],
    storeLatencyMs: 0,
  };

  const takeFailure = (provider: 'store' | 'card', method: string, path: string) => {
    const failure = state.failures.find((f) => f.provider === provider && f.method === method && f.path.test(path) && f.times > 0);
    if (!failure) return undefined;
    failure.times -= 1;
    return HttpResponse.json(failure.body as Record<string, unknown>, { status: failure.status });
  };

  const wooAuthorized = (request: Request) =>
    request.headers.get('authorization') ===
    `Basic ${Buffer.from(`${TEST_CONSUMER_KEY}:${TEST_CONSUMER_SECRET}`).toString('base64')}`;

  async function record(provider: 'store' | 'card', request: Request): Promise<{ path: string; body: unknown }> {
    const url = new URL(request.url);
    const text = request.method === 'GET' || request.method === 'DELETE' ? '' : await request.text();
    let body: unknown = undefined;
    if (text) body = provider === 'card' ? parseFormBody(text) : JSON.parse(text);
    state.calls.push({ provider, method: request.method, path: url.pathname, body, headers: headerRecord(request.headers) });
    return { path: url.pathname, body };
  }

  const woo = <T>(run: () => T) => {
    try {
      return HttpResponse.json(run() as Record<string, unknown>);
    } catch (error) {
      if (error instanceof WooError) {
        return HttpResponse.json({ code: error.code, message: error.message, data: { status: error.status } }, { status: error.status });
      }
      throw error;
    }
  };

  const storeHandler =
    (run: (params: Record<string, string>, body: unknown) => unknown) =>
    async ({ request, params }: { request: Request; params: Record<string, string | readonly string[] | undefined> }) => {
      const { path, body } = await record('store', request);
      if (state.storeLatencyMs > 0) await delay(state.storeLatencyMs);
      if (!wooAuthorized(request)) {
        return HttpResponse.json({ code: 'woocommerce_rest_cannot_view', message: 'Sorry, you cannot list resources.' }, { status: 401 });
      }
      const failed = takeFailure('store', request.method, path);
      if (failed) return failed;
      return woo(() => run(params as Record<string, string>, body));
    };

  const stripeHandler =
    (run: (params: Record<string, string>, body: Record<string, unknown>, request: Request) => { status: number; body: unknown }) =>
    async ({ request, params }: { request: Request; params: Record<string, string | readonly string[] | undefined> }) => {
      const { path, body } = await record('card', request);
      if (request.headers.get('authorization') !== `Bearer ${TEST_STRIPE_KEY}`) {
        return HttpResponse.json(new StripeApiError(401, 'invalid_request_error', undefined, 'Invalid API Key provided').toJSON(), { status: 401 });
      }
      const failed = takeFailure('card', request.method, path);
      if (failed) return failed;
      try {
        const answer = run(params as Record<string, string>, (body ?? {}) as Record<string, unknown>, request);
        return HttpResponse.json(answer.body as Record<string, unknown>, { status: answer.status });
      } catch (error) {
        if (error instanceof StripeApiError) return HttpResponse.json(error.toJSON(), { status: error.status });
        throw error;
      }
    };

  const handlers = [
    http.get(`${WOO_API}/orders/:id`, storeHandler(({ id }) => state.woo.get(Number(id)))),
    http.put(`${WOO_API}/orders/:id`, storeHandler(({ id }, body) => state.woo.update(Number(id), body as Record<string, unknown>))),
    http.delete(`${BRIDGE_API}/customers/:id/cart`, storeHandler(({ id }) => state.woo.clearCart(Number(id)))),
    http.post(
      `${BRIDGE_API}/customers/:id/cart/restore`,
      storeHandler(({ id }, body) => state.woo.restoreCart(Number(id), Number((body as { order_id?: unknown })?.order_id))),
    ),
    http.post(
      `${STRIPE_API}/payment_intents`,
      stripeHandler((_params, body, request) =>
        state.stripe.idempotent(request.headers.get('idempotency-key'), JSON.stringify(body), () => state.stripe.create(body)),
      ),
    ),
    http.get(`${STRIPE_API}/events`, stripeHandler((_params, _body, request) => state.stripe.events.list(new URL(request.url).searchParams))),
    http.get(`${WOO_API}/orders`, storeHandler(() => [...state.woo.orders.keys()].sort((a, b) => b - a).slice(0, 1).map((id) => ({ id })))),
    http.get(`${STRIPE_API}/payment_intents/:id`, stripeHandler(({ id }) => ({ status: 200, body: state.stripe.retrieve(id as string) }))),
    http.post(
      `${STRIPE_API}/payment_intents/:id`,
      stripeHandler(({ id }, body, request) =>
        state.stripe.idempotent(request.headers.get('idempotency-key'), `${id}:${JSON.stringify(body)}`, () =>
          state.stripe.update(id as string, body),
        ),
      ),
    ),
  ];

  const server = setupServer(...handlers);

  const providers: Providers = {
    get woo() {
      return state.woo;
    },
    get stripe() {
      return state.stripe;
    },
    get calls() {
      return state.calls;
    },
    callsTo(provider, method, path) {
      return state.calls.filter((c) => c.provider === provider && (!method || c.method === method) && (!path || path.test(c.path)));
    },
    orderUpdates(orderId) {
      return state.calls
        .filter((c) => c.provider === 'store' && c.method === 'PUT' && (orderId === undefined || c.path.endsWith(`/orders/${orderId}`)))
        .map((c) => c.body as Record<string, unknown>);
    },
    failStore(method, path, status, code, times = 1) {
      state.failures.push({ provider: 'store', method, path, status, times, body: { code, message: 'Upstream failure', data: { status } } });
    },
    failCard(method, path, status, type, code, times = 1) {
      state.failures.push({ provider: 'card', method, path, status, times, body: { error: { type, code, message: 'Upstream failure' } } });
    },
    setStoreLatency(ms) {
      state.storeLatencyMs = ms;
    },
    reset(options) {
      state.storeLatencyMs = 0;
      state.woo = new WooCommerceModel(options);
      state.stripe = new StripeModel();
      state.calls = [];
      state.failures = [];
    },
  };
  return { providers, server };
}

/** Installs the msw server for a test file; the file's beforeEach calls `providers.reset()`. */
export function useProviders(): Providers {
  const { providers, server } = createProviders();
  beforeAll(() => server.listen({ onUnhandledRequest: 'error' }));
  afterEach(() => {
    server.resetHandlers();
  });
  afterAll(() => server.close());
  return providers;
}
