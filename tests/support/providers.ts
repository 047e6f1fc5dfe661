/**
 * msw mounts the stand-ins' own fetch handlers (stand-ins/<provider>/fetch-handler.ts,
 * the same ones the loopback servers serve), so route tests exercise the real
 * store and card clients against one implementation of WooCommerce and Stripe.
 * Around them, test-only controls: every request is recorded for assertions on
 * what was written and sent, failures and latency can be injected, and
 * anything unhandled fails the test (onUnhandledRequest: 'error').
 */
import { delay, http, HttpResponse } from 'msw';
import { setupServer } from 'msw/node';
import { afterAll, afterEach, beforeAll } from 'vitest';
import type { FetchHandler } from '@/stand-ins/loopback-http';
import { stripeApiHandler } from '@/stand-ins/stripe/fetch-handler';
import { StripeModel, parseFormBody } from '@/stand-ins/stripe/model';
import { wooCommerceApiHandler } from '@/stand-ins/woocommerce/fetch-handler';
import { WooCommerceModel, type WooModelOptions } from '@/stand-ins/woocommerce/model';
import { TEST_CONSUMER_KEY, TEST_CONSUMER_SECRET, TEST_STORE_URL, TEST_STRIPE_KEY } from './env';
import { createStoreFaults, type StoreFaults } from './store-faults';

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
  /** Store faults (tests/support/store-faults.ts) in front of the WooCommerce stand-in; cleared by reset(). */
  storeFaults: StoreFaults;
  /** Delays every store answer by this many milliseconds (to make concurrent requests overlap). */
  setStoreLatency(ms: number): void;
  /**
   * Holds the next matching store call open: `reached` resolves when it arrives, and it is
   * answered (by the stand-in, as usual) only once `release()` is called.
   */
  holdStore(method: string, path: RegExp): StoreHold;
  /** Resets models, recordings, failures and latency (call it in each test file's beforeEach). */
  reset(options?: WooModelOptions): void;
}

export interface StoreHold {
  reached: Promise<void>;
  release(): void;
}

interface Failure {
  method: string;
  path: RegExp;
  status: number;
  body: unknown;
  times: number;
}

const STRIPE_HOST = 'https://api.stripe.com';

function headerRecord(headers: Headers): Record<string, string> {
  const out: Record<string, string> = {};
  headers.forEach((value, key) => {
    out[key] = value;
  });
  return out;
}

export function createProviders(): { providers: Providers; server: ReturnType<typeof setupServer> } {
  const mount = (woo: WooCommerceModel, stripe: StripeModel) => ({
    woo,
    stripe,
    wooCommerceApi: wooCommerceApiHandler(woo, { consumerKey: TEST_CONSUMER_KEY, consumerSecret: TEST_CONSUMER_SECRET }),
    stripeApi: stripeApiHandler(stripe, TEST_STRIPE_KEY),
  });
  const state = {
    ...mount(new WooCommerceModel(), new StripeModel()),
    calls: [] as RecordedCall[],
    failures: [] as (Failure & { provider: 'store' | 'card' })[],
    storeLatencyMs: 0,
    storeFaults: createStoreFaults(),
    holds: [] as { method: string; path: RegExp; arrived: () => void; released: Promise<void> }[],
  };

  const takeFailure = (provider: 'store' | 'card', method: string, path: string) => {
    const failure = state.failures.find((f) => f.provider === provider && f.method === method && f.path.test(path) && f.times > 0);
    if (!failure) return undefined;
    failure.times -= 1;
    return HttpResponse.json(failure.body as Record<string, unknown>, { status: failure.status });
  };

  async function record(provider: 'store' | 'card', request: Request): Promise<string> {
    const url = new URL(request.url);
    const text = request.method === 'GET' || request.method === 'DELETE' ? '' : await request.clone().text();
    let body: unknown = undefined;
    if (text) body = provider === 'card' ? parseFormBody(text) : JSON.parse(text);
    state.calls.push({ provider, method: request.method, path: url.pathname, body, headers: headerRecord(request.headers) });
    return url.pathname;
  }

  /** Recording, injected failures and latency around a stand-in's own handler. */
  const mounted =
    (provider: 'store' | 'card', handler: () => FetchHandler) =>
    async ({ request }: { request: Request }) => {
      const path = await record(provider, request);
      if (provider === 'store' && state.storeLatencyMs > 0) await delay(state.storeLatencyMs);
      const hold = provider === 'store' ? state.holds.findIndex((h) => h.method === request.method && h.path.test(path)) : -1;
      if (hold >= 0) {
        const [{ arrived, released }] = state.holds.splice(hold, 1) as [(typeof state.holds)[number]];
        arrived();
        await released;
      }
      return takeFailure(provider, request.method, path) ?? handler()(request);
    };

  const handlers = [
    http.all(`${TEST_STORE_URL}/*`, mounted('store', () => state.storeFaults.wrap(state.wooCommerceApi))),
    http.all(`${STRIPE_HOST}/*`, mounted('card', () => state.stripeApi)),
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
    get storeFaults() {
      return state.storeFaults;
    },
    setStoreLatency(ms) {
      state.storeLatencyMs = ms;
    },
    holdStore(method, path) {
      let arrived!: () => void;
      let release!: () => void;
      const reached = new Promise<void>((resolve) => (arrived = resolve));
      const released = new Promise<void>((resolve) => (release = resolve));
      state.holds.push({ method, path, arrived, released });
      return { reached, release };
    },
    reset(options) {
      state.storeLatencyMs = 0;
      Object.assign(state, mount(new WooCommerceModel(options), new StripeModel()));
      state.calls = [];
      state.failures = [];
      state.storeFaults.clear();
      state.storeFaults = createStoreFaults();
      state.holds = [];
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
