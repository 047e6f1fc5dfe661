/**
 * The service's own cost without Next.js: each flow's requests handed straight
 * to the route handlers (app/api/.../route.ts) in this process, against the
 * same stand-ins and proxies as the server, with this process's CPU time per
 * request after the same warm-up. What it leaves out of the server's figure is
 * Next.js: its request and answer handling, and what the same work costs
 * inside its server (every promise pays for its async contexts there).
 *
 * The bench bundles this file with esbuild (the WooCommerce library's ES
 * module build, the other packages as they are) and runs it with node in its
 * own process: node scripts/.../in-process.cjs '<json: urls, flows, counts>'.
 * Prints one JSON line: [{ name, cpuMsPerRequest }].
 */
import { demoServiceEnv } from '@/stand-ins/demo/world';
import type { BenchStandInUrls } from './contract';
import { aroundFlow, benchFlows, STOREFRONT_ORIGIN, type BenchRequest, type Control, type FlowContext } from './flows';

interface Input {
  urls: BenchStandInUrls;
  warmup: number;
  count: number;
}

async function main(): Promise<void> {
  const input = JSON.parse(process.argv[2] ?? '{}') as Input;
  Object.assign(process.env, {
    ...demoServiceEnv({ woocommerce: input.urls.woocommerce, stripe: input.urls.stripe, storefrontOrigins: [STOREFRONT_ORIGIN] }),
    TRUST_PROXY_HOPS: '1',
    UPSTREAM_TIMEOUT_MS: '10000',
    NODE_ENV: 'production',
  });
  // The server writes its log lines to a file; here they are dropped, as the flows' own output.
  const print = (line: string) => process.stdout.write(`${line}\n`);
  console.log = () => undefined;
  console.warn = () => undefined;
  console.error = () => undefined;

  const routes: Record<string, (request: Request) => Promise<Response>> = {
    '/api/payment-intent': (await import('@/app/api/payment-intent/route')).POST,
    '/api/submit-order': (await import('@/app/api/submit-order/route')).POST,
    '/api/cardprovider/webhook': (await import('@/app/api/cardprovider/webhook/route')).POST,
    '/api/shipping/webhook': (await import('@/app/api/shipping/webhook/route')).POST,
  };
  const send = async (request: BenchRequest): Promise<number> => {
    const handler = routes[request.path];
    if (!handler) throw new Error(`in-process: no handler for ${request.path}`);
    const response = await handler(
      new Request(`http://127.0.0.1:3000${request.path}`, {
        method: request.method,
        headers: request.headers,
        ...(request.body === undefined ? {} : { body: request.body }),
      }),
    );
    await response.arrayBuffer();
    return response.status;
  };
  const call = async <T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> => {
    const response = await fetch(`${input.urls.control}${path}`, {
      method,
      ...(body === undefined ? {} : { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }),
    });
    if (!response.ok) throw new Error(`stand-in control ${method} ${path}: ${response.status}`);
    return (await response.json()) as T;
  };
  const control: Control = {
    seed: async (count, options = {}) => (await call<{ ids: number[] }>('POST', '/seed', { count, ...options })).ids,
    setLatency: async (ms) => void (await call('POST', '/latency', { ms })),
    setStatusRegistered: async (status, registered) => void (await call('POST', '/status', { status, registered })),
    orderStatus: async (id) => (await call<{ status: string }>('GET', `/order?id=${id}`)).status,
  };
  const context: FlowContext = { control, send };

  const results: { name: string; cpuMsPerRequest: number }[] = [];
  for (const flow of benchFlows()) {
    await aroundFlow(flow, context, async () => {
      const requests = await flow.prepare(input.warmup + input.count, context);
      const check = async (request: BenchRequest) => {
        const status = await send(request);
        if (status !== flow.status) throw new Error(`in-process ${flow.name}: expected ${flow.status}, got ${status}`);
      };
      for (const request of requests.slice(0, input.warmup)) await check(request);
      const before = process.cpuUsage();
      for (const request of requests.slice(input.warmup)) await check(request);
      const used = process.cpuUsage(before);
      results.push({ name: flow.name, cpuMsPerRequest: (used.user + used.system) / 1000 / input.count });
    });
  }
  print(JSON.stringify(results));
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);
