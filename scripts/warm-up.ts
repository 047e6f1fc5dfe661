/**
 * `next dev` compiles a route the first time it is asked for: on two busy
 * cores the payment-intent route took 18 s and the card webhook 4 s more, all
 * inside a customer's first payment. `npm run dev` asks for every route once
 * after the server starts, before it says the service is ready, so the first
 * payment answers at once.
 *
 * Each route is asked in a way that loads its module and changes nothing:
 * OPTIONS for a route handler (answered by the checkout routes' CORS preflight,
 * or by Next.js itself for the others, without running the service's code),
 * GET for a page. Routes are found under app/, so a new one is warmed too.
 * Then, given the cron secret, one deep health check: it loads the store and
 * card-provider clients every route shares (the Stripe SDK is loaded on first
 * use) with one read of each upstream, what any health monitor does. Last, in
 * the demo, a payment's two calls for an order the shop does not hold: a
 * checkout call answered 404 and a signed payment event changing nothing, so
 * the code a payment runs has run once (the first run of any code is the
 * slowest) and no order, rate limit or customer sees it.
 * Not part of the production bundle.
 */
import { readdirSync } from 'node:fs';
import { join, relative, sep } from 'node:path';

/** Marks the warm-up's requests (`/api/health?warm-up`), so its log lines can be told from real ones. */
export const WARM_UP_QUERY = 'warm-up';

/** The request id of the warm-up's payment calls: their log lines carry it. */
export const WARM_UP_REQUEST_ID = 'warm-up';

/**
 * Where the warm-up's payment calls come from: an address reserved for documentation (RFC 5737),
 * so they count against a rate-limit bucket no customer uses.
 */
const WARM_UP_CLIENT_IP = '192.0.2.1';

export interface WarmRoute {
  path: string;
  method: 'OPTIONS' | 'GET';
}

/** Every route under an App Router directory: route handlers (OPTIONS) and pages (GET), sorted by path. */
export function appRoutes(appDir: string): WarmRoute[] {
  const routes: WarmRoute[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const full = join(dir, entry.name);
      if (entry.isDirectory()) {
        // Private folders (_x) are not routes; dynamic segments ([id]) cannot be asked for without a value.
        if (!entry.name.startsWith('_') && !entry.name.startsWith('[')) walk(full);
        continue;
      }
      const kind = /^(route|page)\.(ts|tsx|js|jsx)$/.exec(entry.name)?.[1];
      if (!kind) continue;
      const segments = relative(appDir, dir)
        .split(sep)
        // Route groups, (shop), are not part of the URL.
        .filter((segment) => segment !== '' && !/^\(.*\)$/.test(segment));
      routes.push({ path: `/${segments.join('/')}`, method: kind === 'route' ? 'OPTIONS' : 'GET' });
    }
  };
  walk(appDir);
  return routes.sort((a, b) => a.path.localeCompare(b.path));
}

export interface WarmResult {
  route: WarmRoute;
  /** The answer's status, or 0 when the request failed. */
  status: number;
  ms: number;
}

/**
 * Asks for each route, two at a time (the compiler uses the cores; more at once only queues), and
 * reports each one done. `origin` is sent as a storefront's, so the checkout routes answer their preflight.
 */
export async function warmRoutes(
  baseUrl: string,
  routes: readonly WarmRoute[],
  options: { origin?: string; onDone?: (result: WarmResult, done: number) => void; timeoutMs?: number } = {},
): Promise<WarmResult[]> {
  const queue = [...routes];
  const results: WarmResult[] = [];
  const worker = async () => {
    for (let route = queue.shift(); route; route = queue.shift()) {
      const started = Date.now();
      let status = 0;
      try {
        const response = await fetch(`${baseUrl}${route.path}?${WARM_UP_QUERY}`, {
          method: route.method,
          headers: {
            ...(options.origin ? { Origin: options.origin } : {}),
            ...(route.method === 'OPTIONS' ? { 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'content-type' } : {}),
          },
          signal: AbortSignal.timeout(options.timeoutMs ?? 180_000),
        });
        status = response.status;
        await response.arrayBuffer();
      } catch {
        status = 0;
      }
      const result = { route, status, ms: Date.now() - started };
      results.push(result);
      options.onDone?.(result, results.length);
    }
  };
  await Promise.all([worker(), worker()]);
  return results;
}

/** The deep health check, as a monitor asks it: its status (200 ok, 503 degraded, 0 no answer). */
export async function warmClients(baseUrl: string, cronSecret: string, timeoutMs = 180_000): Promise<number> {
  try {
    const response = await fetch(`${baseUrl}/api/health?${WARM_UP_QUERY}`, {
      headers: { Authorization: `Bearer ${cronSecret}` },
      signal: AbortSignal.timeout(timeoutMs),
    });
    await response.arrayBuffer();
    return response.status;
  } catch {
    return 0;
  }
}

export interface PaymentRehearsal {
  /** A checkout token for an order the shop does not hold. */
  token: string;
  /** An allowed storefront origin. */
  origin: string;
  /** A signed card event about that order: its body and Stripe-Signature header. */
  event: { payload: string; signature: string };
}

/** The two calls of a card payment, about an order the shop does not hold: the statuses they answered. */
export async function rehearsePayment(baseUrl: string, rehearsal: PaymentRehearsal, timeoutMs = 180_000): Promise<number[]> {
  const post = async (path: string, headers: Record<string, string>, body: string): Promise<number> => {
    try {
      const response = await fetch(`${baseUrl}${path}?${WARM_UP_QUERY}`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'X-Forwarded-For': WARM_UP_CLIENT_IP, 'X-Request-Id': WARM_UP_REQUEST_ID, ...headers },
        body,
        signal: AbortSignal.timeout(timeoutMs),
      });
      await response.arrayBuffer();
      return response.status;
    } catch {
      return 0;
    }
  };
  return [
    await post('/api/payment-intent', { Origin: rehearsal.origin }, JSON.stringify({ token: rehearsal.token })),
    await post('/api/stripe/webhook', { 'Stripe-Signature': rehearsal.event.signature }, rehearsal.event.payload),
  ];
}
