/**
 * The bench's measurements, each against processes the caller started
 * (scripts/bench/world.ts): CPU per request over sequential requests,
 * throughput at concurrency, latency against the round-trip floor with slow
 * upstreams, cold starts, the floor of one upstream call, the flows without
 * Next.js, and the memory a client leaves behind. scripts/bench/run.ts
 * chooses the counts; scripts/bench/report.ts writes them up.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { build } from 'esbuild';
import { DEMO_SECRETS, demoServiceEnv } from '@/stand-ins/demo/world';
import { commandsBetween, median, sequentialCalls, upstreamTimeMs } from './figures';
import {
  aroundFlow,
  benchFlows,
  nextClientIp,
  STOREFRONT_ORIGIN,
  TRIVIAL_PATH,
  trivialFlow,
  type BenchRequest,
  type Control,
  type Flow,
  type FlowContext,
} from './flows';
import { treeCpuMs } from './process-stats';
import { controlApi, keep, progress, sendRequest } from './session';
import type { BenchStandInUrls, UpstreamCall } from './contract';
import { ARTIFACTS, firstAnswer, REDIS_SERVER, ROOT, spawnServer, startRedis, type RedisProcess, type ServerProcess, type StandInsProcess } from './world';

export const CONNECTIONS = 16;
/** autocannon's sample interval: it stops only at a tick, so a short one keeps the timing of a short run honest. */
export const SAMPLE_MS = 20;
export const UPSTREAM_LATENCY_MS = 40;

// ---------------------------------------------------------------- talking to the processes

export async function send(serverUrl: string, request: BenchRequest): Promise<number> {
  return (await sendRequest(serverUrl, request)).status;
}

export function controlOf(standIns: StandInsProcess): Control & { calls(): Promise<UpstreamCall[]> } {
  const call = controlApi(standIns.control);
  return {
    seed: async (count, seedOptions = {}) => (await call<{ ids: number[] }>('POST', '/seed', { count, ...seedOptions })).ids,
    setLatency: async (ms) => void (await call('POST', '/latency', { ms })),
    setStatusRegistered: async (status, registered) => void (await call('POST', '/status', { status, registered })),
    orderStatus: async (id) => (await call<{ status: string }>('GET', `/order?id=${id}`)).status,
    calls: async () => (await call<{ calls: UpstreamCall[] }>('GET', '/calls')).calls,
  };
}

// ---------------------------------------------------------------- measurements

export interface Sequential {
  requests: number;
  cpuMsPerRequest: number;
  meanMs: number;
  p50Ms: number;
  upstreamCallsPerRequest: number;
  redisCommandsPerRequest?: number;
}

export async function checkLeftOrders(flow: Flow, control: Control): Promise<void> {
  if (!flow.leaves || flow.leaves.ids.length === 0) return;
  const { ids, status } = flow.leaves;
  for (const id of [ids[0] as number, ids[ids.length - 1] as number]) {
    const got = await control.orderStatus(id);
    if (got !== status) throw new Error(`${flow.name}: order ${id} is ${got}, expected ${status}`);
  }
}

export function contextFor(server: ServerProcess, control: Control): FlowContext {
  return { control, send: (request) => send(server.url, request) };
}

/** `count` requests one after the other: the server tree's CPU time over them, divided by their number. */
export async function sequential(
  server: ServerProcess,
  standIns: StandInsProcess,
  flow: Flow,
  count: number,
  redis: RedisProcess | undefined,
  warmup: number,
): Promise<Sequential> {
  const control = controlOf(standIns);
  const context = contextFor(server, control);
  return aroundFlow(flow, context, async () => {
    // The first requests of a flow run code V8 has not optimised yet: measured, they made a flow cost up to
    // 1.5 times its steady state. They are sent first, unmeasured, on orders of their own.
    const all = await flow.prepare(warmup + count, context);
    for (const request of all.slice(0, warmup)) {
      const status = await send(server.url, request);
      if (status !== flow.status) throw new Error(`${flow.name}, warming up: expected ${flow.status}, got ${status}`);
    }
    const requests = all.slice(warmup);
    await control.calls(); // forget the calls made while preparing and warming up
    const commandsBefore = await redis?.commandCounts();
    const latencies: number[] = [];
    const wrong = new Map<number, number>();
    const cpuBefore = treeCpuMs(server.pid);
    for (const request of requests) {
      const started = performance.now();
      const status = await send(server.url, request);
      latencies.push(performance.now() - started);
      if (status !== flow.status) wrong.set(status, (wrong.get(status) ?? 0) + 1);
    }
    const cpuAfter = treeCpuMs(server.pid);
    const commandsAfter = await redis?.commandCounts();
    const calls = await control.calls();
    if (wrong.size > 0) throw new Error(`${flow.name}: expected ${flow.status}, got ${JSON.stringify(Object.fromEntries(wrong))}`);
    await checkLeftOrders(flow, control);
    return {
      requests: requests.length,
      cpuMsPerRequest: (cpuAfter - cpuBefore) / requests.length,
      meanMs: latencies.reduce((a, b) => a + b, 0) / latencies.length,
      p50Ms: median(latencies),
      upstreamCallsPerRequest: calls.length / requests.length,
      ...(commandsBefore && commandsAfter ? { redisCommandsPerRequest: commandsBetween(commandsBefore, commandsAfter) / requests.length } : {}),
    };
  });
}

export interface Throughput {
  requests: number;
  perSecond: number;
  p50Ms: number;
  p99Ms: number;
}

export async function throughput(server: ServerProcess, standIns: StandInsProcess, flow: Flow, count: number): Promise<Throughput> {
  const control = controlOf(standIns);
  const context = contextFor(server, control);
  return aroundFlow(flow, context, async () => {
    // autocannon builds one request per connection ahead of time: prepare a few spare ones.
    const requests = await flow.prepare(count + 2 * CONNECTIONS, context);
    let next = 0;
    const started = performance.now();
    const result = await autocannon({
      url: server.url,
      connections: CONNECTIONS,
      amount: count,
      timeout: 30,
      sampleInt: SAMPLE_MS,
      requests: [
        {
          setupRequest: (request) => {
            const prepared = requests[next % requests.length] as BenchRequest;
            next += 1;
            return { ...request, method: prepared.method, path: prepared.path, headers: prepared.headers, body: prepared.body ?? '' };
          },
        },
      ],
    });
    // Timed here, and autocannon told to look often: it notices that `amount` is reached only at its next
    // sample tick (every second by default), which made 200 requests in 4.1 s read as 200 in 5 s.
    const seconds = (performance.now() - started) / 1000;
    const expected = result.statusCodeStats?.[String(flow.status) as `${number}`]?.count ?? 0;
    if (expected !== result.requests.total || result.errors > 0 || result.timeouts > 0) {
      throw new Error(
        `${flow.name} at concurrency ${CONNECTIONS}: ${expected} of ${result.requests.total} answered ${flow.status}` +
          ` (statuses ${JSON.stringify(result.statusCodeStats)}, errors ${result.errors}, timeouts ${result.timeouts})`,
      );
    }
    return {
      requests: result.requests.total,
      perSecond: result.requests.total / seconds,
      p50Ms: result.latency.p50,
      p99Ms: result.latency.p99,
    };
  });
}

export interface Latency {
  requests: number;
  p50Ms: number;
  sequentialCalls: number;
  floorMs: number;
  /** Median over requests of (latency / that request's floor). */
  ratio: number;
  /** Median over requests of the time the upstreams took, as their proxies logged it (at least the floor). */
  upstreamMs: number;
  /** Median over requests of (latency / the time its upstreams took). */
  ratioToUpstream: number;
  /** Median over requests of (latency − the time its upstreams took): the service's own share of the wait. */
  ownMs: number;
}

/** Upstreams answering after 40 ms: each request's latency against its own count of sequential upstream calls × 40 ms. */
export async function latency(server: ServerProcess, standIns: StandInsProcess, flow: Flow, count: number): Promise<Latency> {
  const control = controlOf(standIns);
  const context = contextFor(server, control);
  return aroundFlow(flow, context, async () => {
    const requests = await flow.prepare(count, context);
    await control.setLatency(UPSTREAM_LATENCY_MS);
    const latencies: number[] = [];
    const depths: number[] = [];
    const ratios: number[] = [];
    const upstreamTimes: number[] = [];
    const upstreamRatios: number[] = [];
    const own: number[] = [];
    try {
      await control.calls();
      for (const request of requests) {
        const started = performance.now();
        const status = await send(server.url, request);
        const took = performance.now() - started;
        if (status !== flow.status) throw new Error(`${flow.name} with ${UPSTREAM_LATENCY_MS} ms upstreams: expected ${flow.status}, got ${status}`);
        // Requests go one at a time, so every call logged since the last one belongs to this request.
        const calls = await control.calls();
        const depth = sequentialCalls(calls);
        latencies.push(took);
        depths.push(depth);
        if (depth > 0) {
          const waited = upstreamTimeMs(calls);
          ratios.push(took / (depth * UPSTREAM_LATENCY_MS));
          upstreamTimes.push(waited);
          upstreamRatios.push(took / waited);
          own.push(took - waited);
        }
      }
    } finally {
      await control.setLatency(0);
    }
    await checkLeftOrders(flow, control);
    const depth = median(depths);
    const medianOrNaN = (values: number[]) => (values.length ? median(values) : Number.NaN);
    return {
      requests: requests.length,
      p50Ms: median(latencies),
      sequentialCalls: depth,
      floorMs: depth * UPSTREAM_LATENCY_MS,
      ratio: medianOrNaN(ratios),
      upstreamMs: medianOrNaN(upstreamTimes),
      ratioToUpstream: medianOrNaN(upstreamRatios),
      ownMs: medianOrNaN(own),
    };
  });
}

// ---------------------------------------------------------------- server configurations

export function serviceEnv(standIns: StandInsProcess, extra: Record<string, string> = {}): Record<string, string> {
  return {
    ...demoServiceEnv({ woocommerce: standIns.woocommerce, stripe: standIns.stripe, storefrontOrigins: [STOREFRONT_ORIGIN] }),
    TRUST_PROXY_HOPS: '1',
    UPSTREAM_TIMEOUT_MS: '10000',
    ...extra,
  };
}

export const trivialProbe = (url: string) => () => fetch(`${url}${TRIVIAL_PATH}`, { headers: { 'x-forwarded-for': nextClientIp() } });

export async function startReady(
  name: string,
  standIns: StandInsProcess,
  env: Record<string, string>,
  nodeArgs: string[] = [],
  serverWarmup = 1,
  root?: string,
): Promise<ServerProcess> {
  const server = await spawnServer(name, env, nodeArgs, root);
  try {
    await firstAnswer(trivialProbe(server.url));
  } catch (error) {
    await server.close();
    throw new Error(`${name}: next start did not answer; see test-artifacts/bench/${name}.log (${String(error)})`);
  }
  // Warm every route (module loading is the cold start's business, measured apart), then every flow a few
  // times over: each comparison server is fresh, and its first flow otherwise ran on a cold JIT (its mean time
  // was about twice that of the same flow on a warm server).
  const context = contextFor(server, controlOf(standIns));
  for (const flow of [trivialFlow, ...benchFlows().filter((f) => !f.before)]) {
    for (const request of await flow.prepare(serverWarmup, context)) await send(server.url, request);
  }
  return server;
}

// ---------------------------------------------------------------- cold start and bundles

/**
 * Each route's first request after a start is a real one, the request of its
 * main flow on a fresh order (a 404 for the trivial route), so whatever the
 * route loads on first use (the Stripe SDK, the Redis client) counts in its
 * cold start. The shipping and card aliases get the same request on their path.
 */
export const COLD_ROUTES: { route: string; flow: string; status: number }[] = [
  { route: TRIVIAL_PATH, flow: trivialFlow.name, status: 404 },
  { route: '/api/payment-intent', flow: 'payment-intent, new intent, with addresses', status: 200 },
  { route: '/api/submit-order', flow: 'submit-order', status: 200 },
  { route: '/api/cardprovider/webhook', flow: 'card success, guest', status: 200 },
  { route: '/api/stripe/webhook', flow: 'card success, guest', status: 200 },
  { route: '/api/shipping/webhook', flow: 'shipping', status: 200 },
  { route: '/api/shipstation/webhook', flow: 'shipping', status: 200 },
];

export interface ColdStart {
  route: string;
  ms: number[];
  /** The same with REDIS_URL set (empty when redis-server is missing). */
  redisMs: number[];
  /** CPU time of the server's process tree at its first answer, without and with REDIS_URL. */
  cpuMs: number[];
  redisCpuMs: number[];
  /** The route's server bundle (bundleBytes), none for the trivial route. */
  bundleBytes?: number;
}

/** One cold start: a fresh server with `env` added to the service's, timed from spawn to the route's first answer. */
export async function coldStart(standIns: StandInsProcess, route: (typeof COLD_ROUTES)[number], env: Record<string, string>): Promise<{ ms: number; cpuMs: number }> {
  const request = await firstRequestOf(route, controlOf(standIns));
  const fresh = await spawnServer('cold', serviceEnv(standIns, env));
  keep(fresh);
  let status = 0;
  const answered = await firstAnswer(async () => {
    const response = await fetch(`${fresh.url}${request.path}`, {
      method: request.method,
      headers: request.headers,
      ...(request.body === undefined ? {} : { body: request.body }),
    });
    status = response.status;
    return response;
  });
  const cpuMs = treeCpuMs(fresh.pid);
  await fresh.close();
  if (status !== route.status) throw new Error(`cold start of ${route.route}: expected ${route.status}, got ${status}`);
  return { ms: answered - fresh.spawnedAt, cpuMs };
}

/**
 * Cold starts without Redis and with REDIS_URL pointing at a throw-away
 * redis-server (the Redis client is then loaded and connected when the
 * instance starts, instrumentation.ts), each route against its series'
 * trivial route. The two series and the routes take turns within each repeat,
 * so a machine that gets busier during the run moves them all alike.
 */
export async function coldStarts(standIns: StandInsProcess, repeats: number): Promise<ColdStart[]> {
  progress('cold start, route by route (each first request a real one), without and with REDIS_URL in turn');
  const redis = existsSync(REDIS_SERVER) ? await startRedis() : undefined;
  if (redis) keep(redis);
  const results: ColdStart[] = COLD_ROUTES.map((route) => ({
    route: route.route === TRIVIAL_PATH ? `${TRIVIAL_PATH} (404)` : route.route,
    ms: [],
    redisMs: [],
    cpuMs: [],
    redisCpuMs: [],
    ...(route.route === TRIVIAL_PATH ? {} : { bundleBytes: bundleBytes(route.route) }),
  }));
  for (let repeat = 0; repeat < repeats; repeat += 1) {
    for (const [index, route] of COLD_ROUTES.entries()) {
      const entry = results[index] as ColdStart;
      const plain = await coldStart(standIns, route, {});
      entry.ms.push(plain.ms);
      entry.cpuMs.push(plain.cpuMs);
      let line = `  ${route.route}: ${plain.ms.toFixed(0)} ms (${plain.cpuMs.toFixed(0)} ms CPU)`;
      if (redis) {
        const withRedis = await coldStart(standIns, route, { REDIS_URL: redis.url });
        entry.redisMs.push(withRedis.ms);
        entry.redisCpuMs.push(withRedis.cpuMs);
        line += `, with REDIS_URL ${withRedis.ms.toFixed(0)} ms (${withRedis.cpuMs.toFixed(0)} ms CPU)`;
      }
      progress(line);
    }
  }
  await redis?.close();
  return results;
}

export async function firstRequestOf(route: (typeof COLD_ROUTES)[number], control: Control): Promise<BenchRequest> {
  const flow = [trivialFlow, ...benchFlows()].find((candidate) => candidate.name === route.flow);
  if (!flow) throw new Error(`cold start: no flow named ${route.flow}`);
  const context: FlowContext = {
    control,
    send: () => Promise.reject(new Error('cold start: a flow that sends while preparing cannot be a first request')),
  };
  const [request] = await flow.prepare(1, context);
  if (!request) throw new Error(`cold start: ${flow.name} prepared no request`);
  return { ...request, path: route.route };
}

/** route.js and the chunks it loads (`R.c("server/chunks/…")`), in bytes; packages from node_modules are not in it. */
export function bundleBytes(route: string): number | undefined {
  const file = join(ROOT, '.next', 'server', 'app', route.replace(/^\//, ''), 'route.js');
  if (!existsSync(file)) return undefined;
  const text = readFileSync(file, 'utf8');
  let total = statSync(file).size;
  for (const match of text.matchAll(/R\.c\("(server\/chunks\/[^"]+)"\)/g)) {
    const chunk = join(ROOT, '.next', match[1] as string);
    if (existsSync(chunk)) total += statSync(chunk).size;
  }
  return total;
}

// ---------------------------------------------------------------- the floor of one upstream call

/**
 * One bare keep-alive GET of an order through the WooCommerce proxy, in its own
 * process (scripts/bench/bare-calls.ts): the CPU any client pays per upstream
 * call on this machine, loopback and kernel included, before any library code.
 */
export async function bareCallCpuMs(standIns: StandInsProcess, count: number): Promise<number> {
  const [orderId] = await controlOf(standIns).seed(1);
  const credentials = Buffer.from(`${DEMO_SECRETS.consumerKey}:${DEMO_SECRETS.consumerSecret}`).toString('base64');
  const output = execFileSync(
    process.execPath,
    [
      '--import',
      'tsx',
      join(ROOT, 'scripts', 'bench', 'bare-calls.ts'),
      `${standIns.woocommerce}/wp-json/wc/v3/orders/${orderId}`,
      String(count),
      JSON.stringify({ authorization: `Basic ${credentials}`, accept: 'application/json' }),
    ],
    { cwd: ROOT, encoding: 'utf8' },
  );
  const result = JSON.parse(output.trim().split('\n').pop() ?? '{}') as { cpuMsPerCall: number; status: number };
  if (result.status !== 200) throw new Error(`bare calls: the store answered ${result.status}`);
  return result.cpuMsPerCall;
}

// ---------------------------------------------------------------- the service without Next.js

/**
 * CPU per request of each flow with its requests handed straight to the route
 * handlers, in a process of its own (scripts/bench/in-process.ts), against the
 * same stand-ins. esbuild bundles it first, with the WooCommerce library's ES
 * module build: under tsx its CommonJS build reaches the store client as a
 * namespace, not a class.
 */
export async function inProcessCpu(standIns: StandInsProcess, warmup: number, count: number): Promise<Map<string, number>> {
  const outfile = join(ARTIFACTS, 'in-process.cjs');
  const resolve = createRequire(join(ROOT, 'package.json')).resolve;
  await build({
    entryPoints: [join(ROOT, 'scripts', 'bench', 'in-process.ts')],
    bundle: true,
    platform: 'node',
    format: 'cjs',
    outfile,
    packages: 'external',
    alias: { '@woocommerce/woocommerce-rest-api': resolve('@woocommerce/woocommerce-rest-api/index.mjs') },
    tsconfig: join(ROOT, 'tsconfig.json'),
    logLevel: 'warning',
  });
  const urls: BenchStandInUrls = { woocommerce: standIns.woocommerce, stripe: standIns.stripe, control: standIns.control };
  const output = execFileSync(process.execPath, [outfile, JSON.stringify({ urls, warmup, count })], { cwd: ROOT, encoding: 'utf8' });
  const results = JSON.parse(output.trim().split('\n').pop() ?? '[]') as { name: string; cpuMsPerRequest: number }[];
  return new Map(results.map(({ name, cpuMsPerRequest }) => [name, cpuMsPerRequest]));
}

// ---------------------------------------------------------------- the limiter's memory

export interface LimiterPoint {
  clients: number;
  held: number;
  heapKb: number;
}

/** lib/shared-state/rate-limit.ts's default bound. */
export const LIMITER_CLIENTS = 50_000;

/**
 * Runs scripts/bench/limiter-memory.ts (the limiter alone) or route-memory.ts (the card webhook's route
 * handler, without Next.js) in its own process (they need --expose-gc) and reads its points.
 */
export function heapPoints(script: 'limiter-memory.ts' | 'route-memory.ts', clients: number, checkpoint: number): LimiterPoint[] {
  const output = execFileSync(
    process.execPath,
    ['--expose-gc', '--import', 'tsx', join(ROOT, 'scripts', 'bench', script), String(clients), String(checkpoint)],
    { cwd: ROOT, encoding: 'utf8', maxBuffer: 16 * 1024 * 1024 },
  );
  return JSON.parse(output.trim().split('\n').pop() ?? '[]') as LimiterPoint[];
}
