/**
 * `npm run bench`: the service's own cost per request, measured from outside
 * on the production build, each figure as a ratio to Next.js's floor (a 404
 * on the same server in the same run). See docs/benchmarks.md for what each
 * table means; this file writes that document's "Latest run" part.
 *
 *   npm run bench                  full run (about 4 minutes on 2 cores), writes docs/benchmarks.md
 *   npm run bench -- --quick       small counts, to check the harness end to end; writes nothing
 *   npm run bench -- --quick --write   ... and writes the document anyway
 *   --memory-requests N            distinct clients of the memory check (default 100000, quick 3000): all of
 *                                  them through the rate limiter itself (scripts/bench/limiter-memory.ts), and
 *                                  as many as fit in --memory-seconds through the server
 *   --memory-seconds S             the server part's time limit (default 30, quick 10; 0: send them all).
 *                                  Next.js spends a few ms of CPU on any request, so 100,000 of them take
 *                                  minutes, longer than the whole run may.
 *   npm run bench -- --profile [--quick] [--flows NAME]   the server under node --cpu-prof: CPU per flow and where it went
 *   npm run bench -- --load [--quick] [--write]   the store shielding under 1×, 2× and 4× the store's capacity
 *                                  (scripts/bench/load.ts, a few minutes); writes its own section of docs/benchmarks.md
 *   npm run bench -- --cold [--cold-repeats N]   only the cold starts, without and with REDIS_URL; writes nothing
 *
 * Processes: the load generator is this one; the stand-ins (scripts/bench/stand-ins.ts),
 * `next start` and `redis-server` each run in their own, so the server's CPU time
 * (/proc, summed over its process tree) is the server's alone.
 */
import { execFileSync } from 'node:child_process';
import { cpus } from 'node:os';
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { build } from 'esbuild';
import { createRequire } from 'node:module';
import { DEMO_SECRETS, demoServiceEnv } from '@/stand-ins/demo/world';
import {
  commandsBetween,
  fixed,
  markdownTable,
  median,
  ratio,
  replaceLatest,
  replaceSection,
  sequentialCalls,
  upstreamTimeMs,
} from './figures';
import {
  aroundFlow,
  benchFlows,
  memoryProbe,
  nextClientIp,
  preflightFlow,
  STOREFRONT_ORIGIN,
  TRIVIAL_PATH,
  trivialFlow,
  type BenchRequest,
  type Control,
  type Flow,
  type FlowContext,
} from './flows';
import { describeTree, treeCpuMs, treeRssKb } from './process-stats';
import { renderShares, summarizeProfiles } from './profile-summary';
import type { BenchStandInUrls, UpstreamCall } from './contract';
import {
  ARTIFACTS,
  buildApp,
  firstAnswer,
  makeCertificate,
  REDIS_SERVER,
  ROOT,
  spawnServer,
  startRedis,
  startStandIns,
  type RedisProcess,
  type ServerProcess,
  type StandInsProcess,
} from './world';

const { values: options } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    write: { type: 'boolean', default: false },
    'memory-requests': { type: 'string' },
    'memory-seconds': { type: 'string' },
    'cold-repeats': { type: 'string' },
    transports: { type: 'boolean', default: false },
    profile: { type: 'boolean', default: false },
    flows: { type: 'string' },
    load: { type: 'boolean', default: false },
    cold: { type: 'boolean', default: false },
  },
});
const QUICK = options.quick === true;
const SIZES = QUICK
  ? { cpu: 15, warmup: 5, baseWarmup: 5, serverWarmup: 1, inProcess: 15, throughput: 40, latency: 3, variant: 8, variantWarmup: 3, memory: 3000, coldRepeats: 1 }
  : { cpu: 200, warmup: 60, baseWarmup: 400, serverWarmup: 10, inProcess: 100, throughput: 200, latency: 12, variant: 40, variantWarmup: 30, memory: 100_000, coldRepeats: 3 };
const COLD_REPEATS = Number(options['cold-repeats'] ?? SIZES.coldRepeats);
const MEMORY_REQUESTS = Number(options['memory-requests'] ?? SIZES.memory);
const MEMORY_SECONDS = Number(options['memory-seconds'] ?? (QUICK ? 10 : 20));
/** Requests between two RSS readings of the server part. */
const MEMORY_SERVER_CHUNK = QUICK ? 500 : 2500;
/** Clients between two heap readings of the limiter part. */
const MEMORY_LIMITER_CHECKPOINT = QUICK ? 500 : 10_000;
const CONNECTIONS = 16;
/** autocannon's sample interval: it stops only at a tick, so a short one keeps the timing of a short run honest. */
const SAMPLE_MS = 20;
const UPSTREAM_LATENCY_MS = 40;
const DOC = join(ROOT, 'docs', 'benchmarks.md');

const runStarted = performance.now();
const progress = (line: string) => console.log(`[bench ${((performance.now() - runStarted) / 1000).toFixed(0).padStart(3)} s] ${line}`);

// ---------------------------------------------------------------- talking to the processes

async function send(serverUrl: string, request: BenchRequest): Promise<number> {
  const response = await fetch(`${serverUrl}${request.path}`, {
    method: request.method,
    headers: request.headers,
    ...(request.body === undefined ? {} : { body: request.body }),
  });
  await response.arrayBuffer();
  return response.status;
}

function controlOf(standIns: StandInsProcess): Control & { calls(): Promise<UpstreamCall[]> } {
  const call = async <T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> => {
    const response = await fetch(`${standIns.control}${path}`, {
      method,
      ...(body === undefined ? {} : { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }),
    });
    if (!response.ok) throw new Error(`stand-in control ${method} ${path}: ${response.status}`);
    return (await response.json()) as T;
  };
  return {
    seed: async (count, seedOptions = {}) => (await call<{ ids: number[] }>('POST', '/seed', { count, ...seedOptions })).ids,
    setLatency: async (ms) => void (await call('POST', '/latency', { ms })),
    setStatusRegistered: async (status, registered) => void (await call('POST', '/status', { status, registered })),
    orderStatus: async (id) => (await call<{ status: string }>('GET', `/order?id=${id}`)).status,
    calls: async () => (await call<{ calls: UpstreamCall[] }>('GET', '/calls')).calls,
  };
}

// ---------------------------------------------------------------- measurements

interface Sequential {
  requests: number;
  cpuMsPerRequest: number;
  meanMs: number;
  p50Ms: number;
  upstreamCallsPerRequest: number;
  redisCommandsPerRequest?: number;
}

async function checkLeftOrders(flow: Flow, control: Control): Promise<void> {
  if (!flow.leaves || flow.leaves.ids.length === 0) return;
  const { ids, status } = flow.leaves;
  for (const id of [ids[0] as number, ids[ids.length - 1] as number]) {
    const got = await control.orderStatus(id);
    if (got !== status) throw new Error(`${flow.name}: order ${id} is ${got}, expected ${status}`);
  }
}

function contextFor(server: ServerProcess, control: Control): FlowContext {
  return { control, send: (request) => send(server.url, request) };
}

/** `count` requests one after the other: the server tree's CPU time over them, divided by their number. */
async function sequential(
  server: ServerProcess,
  standIns: StandInsProcess,
  flow: Flow,
  count: number,
  redis?: RedisProcess,
  warmup: number = SIZES.warmup,
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

interface Throughput {
  requests: number;
  perSecond: number;
  p50Ms: number;
  p99Ms: number;
}

async function throughput(server: ServerProcess, standIns: StandInsProcess, flow: Flow, count: number): Promise<Throughput> {
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

interface Latency {
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
async function latency(server: ServerProcess, standIns: StandInsProcess, flow: Flow, count: number): Promise<Latency> {
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

function serviceEnv(standIns: StandInsProcess, extra: Record<string, string> = {}): Record<string, string> {
  return {
    ...demoServiceEnv({ woocommerce: standIns.woocommerce, stripe: standIns.stripe, storefrontOrigins: [STOREFRONT_ORIGIN] }),
    TRUST_PROXY_HOPS: '1',
    UPSTREAM_TIMEOUT_MS: '10000',
    ...extra,
  };
}

const trivialProbe = (url: string) => () => fetch(`${url}${TRIVIAL_PATH}`, { headers: { 'x-forwarded-for': nextClientIp() } });

async function startReady(
  name: string,
  standIns: StandInsProcess,
  env: Record<string, string>,
  nodeArgs: string[] = [],
): Promise<ServerProcess> {
  const server = await spawnServer(name, env, nodeArgs);
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
    for (const request of await flow.prepare(SIZES.serverWarmup, context)) await send(server.url, request);
  }
  return server;
}

/** Everything started and not yet stopped, newest last: stopped on the way out, even on Ctrl-C. */
const opened: { close(): Promise<void> }[] = [];

async function closeAll(): Promise<void> {
  while (opened.length > 0) await opened.pop()?.close().catch(() => undefined);
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    console.error(`[bench] ${signal}: stopping the processes it started`);
    void closeAll().finally(() => process.exit(130));
  });
}

// ---------------------------------------------------------------- cold start and bundles

/**
 * Each route's first request after a start is a real one, the request of its
 * main flow on a fresh order (a 404 for the trivial route), so whatever the
 * route loads on first use (the Stripe SDK, the Redis client) counts in its
 * cold start. The shipping and card aliases get the same request on their path.
 */
const COLD_ROUTES: { route: string; flow: string; status: number }[] = [
  { route: TRIVIAL_PATH, flow: trivialFlow.name, status: 404 },
  { route: '/api/payment-intent', flow: 'payment-intent, new intent, with addresses', status: 200 },
  { route: '/api/submit-order', flow: 'submit-order', status: 200 },
  { route: '/api/cardprovider/webhook', flow: 'card success, guest', status: 200 },
  { route: '/api/stripe/webhook', flow: 'card success, guest', status: 200 },
  { route: '/api/shipping/webhook', flow: 'shipping', status: 200 },
  { route: '/api/shipstation/webhook', flow: 'shipping', status: 200 },
];

interface ColdStart {
  route: string;
  ms: number[];
  /** The same with REDIS_URL set (empty when redis-server is missing). */
  redisMs: number[];
  /** CPU time of the server's process tree at its first answer, without and with REDIS_URL. */
  cpuMs: number[];
  redisCpuMs: number[];
}

/** One cold start: a fresh server with `env` added to the service's, timed from spawn to the route's first answer. */
async function coldStart(standIns: StandInsProcess, route: (typeof COLD_ROUTES)[number], env: Record<string, string>): Promise<{ ms: number; cpuMs: number }> {
  const request = await firstRequestOf(route, controlOf(standIns));
  const fresh = await spawnServer('cold', serviceEnv(standIns, env));
  opened.push(fresh);
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
async function coldStarts(standIns: StandInsProcess): Promise<ColdStart[]> {
  progress('cold start, route by route (each first request a real one), without and with REDIS_URL in turn');
  const redis = existsSync(REDIS_SERVER) ? await startRedis() : undefined;
  if (redis) opened.push(redis);
  const results: ColdStart[] = COLD_ROUTES.map((route) => ({
    route: route.route === TRIVIAL_PATH ? `${TRIVIAL_PATH} (404)` : route.route,
    ms: [],
    redisMs: [],
    cpuMs: [],
    redisCpuMs: [],
  }));
  for (let repeat = 0; repeat < COLD_REPEATS; repeat += 1) {
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

async function firstRequestOf(route: (typeof COLD_ROUTES)[number], control: Control): Promise<BenchRequest> {
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
function bundleBytes(route: string): number | undefined {
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
async function bareCallCpuMs(standIns: StandInsProcess, count: number): Promise<number> {
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
async function inProcessCpu(standIns: StandInsProcess, warmup: number, count: number): Promise<Map<string, number>> {
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

interface LimiterPoint {
  clients: number;
  held: number;
  heapKb: number;
}

/** lib/security/rate-limit.ts's default bound. */
const LIMITER_CLIENTS = 50_000;

/**
 * Runs scripts/bench/limiter-memory.ts (the limiter alone) or route-memory.ts (the card webhook's route
 * handler, without Next.js) in its own process (they need --expose-gc) and reads its points.
 */
function heapPoints(script: 'limiter-memory.ts' | 'route-memory.ts', clients: number, checkpoint: number): LimiterPoint[] {
  const output = execFileSync(
    process.execPath,
    ['--expose-gc', '--import', 'tsx', join(ROOT, 'scripts', 'bench', script), String(clients), String(checkpoint)],
    { cwd: ROOT, encoding: 'utf8', maxBuffer: 16 * 1024 * 1024 },
  );
  return JSON.parse(output.trim().split('\n').pop() ?? '[]') as LimiterPoint[];
}

// ---------------------------------------------------------------- the run

interface FlowFigures {
  flow: Flow;
  cpu?: Sequential;
  load?: Throughput;
  slow?: Latency;
  /** The comparison runs, each on a fresh server with the same count: http without Redis, with Redis, https. */
  base?: Sequential;
  redis?: Sequential;
  https?: Sequential;
}

/**
 * `--profile`: one server under `node --cpu-prof`, the sequential CPU figure of
 * each flow (or of those whose name contains `--flows`), then where the
 * server's CPU went, from the profiles it wrote on exit. Writes nothing to docs/.
 */
async function profileRun(): Promise<void> {
  progress(`profile run on ${cpus().length} cores, node ${process.version}`);
  buildApp(progress);
  const tls = await makeCertificate(join(ARTIFACTS, 'tls'));
  const standIns = await startStandIns(tls);
  opened.push(standIns);
  const dir = join(ARTIFACTS, 'profiles');
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const wanted = options.flows;
  const flows = benchFlows().filter((flow) => !wanted || flow.name.includes(wanted));
  try {
    // --cpu-prof is refused in NODE_OPTIONS, so a child `next start` forks would run unprofiled: Next.js 16 serves from this process.
    const server = await startReady('profile', standIns, serviceEnv(standIns), ['--cpu-prof', `--cpu-prof-dir=${dir}`]);
    opened.push(server);
    const trivialCpu = (await sequential(server, standIns, trivialFlow, SIZES.cpu * 2)).cpuMsPerRequest;
    progress(`  trivial 404: ${fixed(trivialCpu)} ms CPU/request`);
    for (const flow of flows) {
      const result = await sequential(server, standIns, flow, SIZES.cpu);
      progress(`  ${flow.name}: ${fixed(result.cpuMsPerRequest)} ms CPU/request, ${fixed(result.cpuMsPerRequest / trivialCpu)}× trivial`);
    }
    await server.close();
  } finally {
    await closeAll();
  }
  console.log(renderShares(summarizeProfiles(dir)));
  progress(`profiles in ${dir} (open them in Chrome DevTools or speedscope)`);
}

async function main(): Promise<void> {
  progress(`${QUICK ? 'quick' : 'full'} run on ${cpus().length} cores, node ${process.version}`);
  buildApp(progress);
  const tlsDir = join(ARTIFACTS, 'tls');
  const tls = await makeCertificate(tlsDir);
  const standIns = await startStandIns(tls);
  opened.push(standIns);
  const figures: FlowFigures[] = benchFlows().map((flow) => ({ flow }));
  const trivial: FlowFigures[] = [];
  const floors: Floors = { preflight: [], bareCallMs: Number.NaN };
  let withoutNext = new Map<string, number>();
  let cold: ColdStart[] = [];
  const memory: { after: number; rssKb: number }[] = [];
  let limiterMemory: LimiterPoint[] = [];
  let routeMemory: LimiterPoint[] = [];
  let treeLines: string[] = [];
  let redisNote = '';

  try {
    // 1. Plain http store, zero-latency upstreams: CPU, throughput, then 40 ms latency, flow by flow.
    progress('server: plain http store, no Redis');
    const server = await startReady('plain', standIns, serviceEnv(standIns));
    opened.push(server);
    treeLines = describeTree(server.pid);
    const measureTrivial = async () => {
      const entry: FlowFigures = { flow: trivialFlow };
      entry.cpu = await sequential(server, standIns, trivialFlow, SIZES.cpu * 2, undefined, SIZES.baseWarmup);
      entry.load = await throughput(server, standIns, trivialFlow, SIZES.throughput * 2);
      trivial.push(entry);
      progress(`  trivial 404: ${fixed(entry.cpu.cpuMsPerRequest)} ms CPU/request, ${fixed(entry.load.perSecond, 0)} req/s`);
      const preflight = await sequential(server, standIns, preflightFlow, SIZES.cpu * 2, undefined, SIZES.baseWarmup);
      floors.preflight.push(preflight.cpuMsPerRequest);
      progress(`  ${preflightFlow.name}: ${fixed(preflight.cpuMsPerRequest)} ms CPU/request`);
    };
    await measureTrivial();
    floors.bareCallMs = await bareCallCpuMs(standIns, SIZES.cpu * 10);
    progress(`  one bare upstream call (its own process): ${fixed(floors.bareCallMs)} ms CPU`);
    for (const entry of figures) {
      entry.cpu = await sequential(server, standIns, entry.flow, SIZES.cpu);
      entry.load = await throughput(server, standIns, entry.flow, SIZES.throughput);
      entry.slow = await latency(server, standIns, entry.flow, SIZES.latency);
      progress(
        `  ${entry.flow.name}: ${fixed(entry.cpu.cpuMsPerRequest)} ms CPU/request, ${fixed(entry.load.perSecond, 0)} req/s, ` +
          `${entry.slow.sequentialCalls} sequential calls, ${fixed(entry.slow.ratio)}× floor`,
      );
    }
    await measureTrivial();

    // 2. Memory: many distinct clients through the card webhook's rate limiter.
    progress(`memory: ${MEMORY_REQUESTS} distinct clients through the rate limiter itself`);
    limiterMemory = heapPoints('limiter-memory.ts', MEMORY_REQUESTS, MEMORY_LIMITER_CHECKPOINT);
    progress(`  heap ${fixed((limiterMemory[limiterMemory.length - 1]?.heapKb ?? 0) / 1024, 1)} MiB after ${MEMORY_REQUESTS} clients`);
    progress(`memory: ${MEMORY_REQUESTS} distinct clients through the card webhook's route handler, without Next.js`);
    routeMemory = heapPoints('route-memory.ts', MEMORY_REQUESTS, MEMORY_LIMITER_CHECKPOINT);
    progress(`  heap ${fixed((routeMemory[routeMemory.length - 1]?.heapKb ?? 0) / 1024, 1)} MiB after ${MEMORY_REQUESTS} clients`);
    progress(`memory: requests from distinct client addresses through the server${MEMORY_SECONDS > 0 ? `, at most ${MEMORY_SECONDS} s` : ''}`);
    const chunk = MEMORY_SERVER_CHUNK;
    const memoryDeadline = performance.now() + MEMORY_SECONDS * 1000;
    memory.push({ after: 0, rssKb: treeRssKb(server.pid) });
    for (let sent = 0; sent < MEMORY_REQUESTS; sent += chunk) {
      if (MEMORY_SECONDS > 0 && performance.now() > memoryDeadline) {
        progress(`  time limit reached after ${sent} requests`);
        break;
      }
      const amount = Math.min(chunk, MEMORY_REQUESTS - sent);
      const result = await autocannon({
        url: server.url,
        connections: CONNECTIONS,
        amount,
        sampleInt: SAMPLE_MS,
        requests: [{ setupRequest: (request) => ({ ...request, ...memoryProbe() }) }],
      });
      if (result.errors > 0 || result.statusCodeStats?.['400']?.count !== result.requests.total) {
        throw new Error(`memory probe: unexpected answers ${JSON.stringify(result.statusCodeStats)}, errors ${result.errors}`);
      }
      memory.push({ after: sent + amount, rssKb: treeRssKb(server.pid) });
      progress(`  ${sent + amount} requests: RSS ${(treeRssKb(server.pid) / 1024).toFixed(1)} MiB`);
    }
    await server.close();

    // 3. The same flows without Next.js: the route handlers called in a process of their own.
    progress('the flows without Next.js: route handlers called in a process of their own');
    withoutNext = await inProcessCpu(standIns, SIZES.warmup, SIZES.inProcess);
    for (const [name, ms] of withoutNext) progress(`  ${name}: ${fixed(ms)} ms CPU/request`);

    // 4. The comparisons, each on a fresh server and with the same count, so that only the configuration differs:
    //    http without Redis (the base), with REDIS_URL set (commands counted from INFO commandstats), the store on https
    //    (Basic credentials instead of OAuth 1.0a signing).
    const compare = async (name: string, env: Record<string, string>, key: 'base' | 'redis' | 'https', redis?: RedisProcess) => {
      progress(`server: ${name}`);
      const fresh = await startReady(key, standIns, serviceEnv(standIns, env));
      opened.push(fresh);
      for (const entry of figures) {
        const result = await sequential(fresh, standIns, entry.flow, SIZES.variant, redis, SIZES.variantWarmup);
        entry[key] = result;
        progress(
          `  ${entry.flow.name}: ${fixed(result.meanMs)} ms, ${fixed(result.cpuMsPerRequest)} ms CPU/request` +
            (redis ? `, ${fixed(result.redisCommandsPerRequest ?? 0, 1)} Redis commands/request` : ''),
        );
      }
      await fresh.close();
    };
    await compare('http store, no Redis (base of the comparisons)', {}, 'base');
    if (existsSync(REDIS_SERVER)) {
      const redis = await startRedis();
      opened.push(redis);
      await compare('http store, with Redis', { REDIS_URL: redis.url }, 'redis', redis);
      await redis.close();
    } else {
      redisNote = `${REDIS_SERVER} not found: the Redis configuration was not run.`;
      progress(redisNote);
    }
    if (standIns.woocommerceHttps) {
      await compare('https store, no Redis', { WOOCOMMERCE_URL: standIns.woocommerceHttps, NODE_EXTRA_CA_CERTS: tls.cert }, 'https');
    }

    // 5. Cold start: a fresh `next start` per route, from spawn to that route's first answer, without and with REDIS_URL.
    cold = await coldStarts(standIns);
  } finally {
    await closeAll();
  }

  const report = renderReport({ figures, trivial, floors, withoutNext, cold, memory, limiterMemory, routeMemory, treeLines, redisNote });
  console.log(`\n${report}\n`);
  if (!QUICK || options.write) {
    const previous = existsSync(DOC) ? readFileSync(DOC, 'utf8') : undefined;
    writeFileSync(DOC, replaceLatest(previous, docIntro(previous), report));
    progress(`wrote ${DOC}`);
  }
  progress('done');
}

// ---------------------------------------------------------------- the report

function commitOf(): string {
  try {
    const head = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--', 'app', 'lib', 'scripts'], { cwd: ROOT, encoding: 'utf8' }).trim();
    return dirty ? `${head} (app/, lib/ or scripts/ modified)` : head;
  } catch {
    return 'unknown';
  }
}

function loadAverage(): string {
  try {
    return readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
  } catch {
    return 'unknown';
  }
}

const loadAtStart = loadAverage();

/** What no implementation of a flow can go below on this server and machine. */
interface Floors {
  /** CPU per request of the cheapest route-handler request (the CORS preflight), at the start and at the end. */
  preflight: number[];
  /** CPU of one bare keep-alive upstream call, in a process of its own. */
  bareCallMs: number;
}

function renderReport(input: {
  figures: FlowFigures[];
  trivial: FlowFigures[];
  floors: Floors;
  /** CPU per request of each flow, by name, with the route handlers called without Next.js. */
  withoutNext: Map<string, number>;
  cold: ColdStart[];
  memory: { after: number; rssKb: number }[];
  limiterMemory: LimiterPoint[];
  routeMemory: LimiterPoint[];
  treeLines: string[];
  redisNote: string;
}): string {
  const { figures, trivial, cold, memory, limiterMemory } = input;
  // The bases are the figures taken at the end, on a server that has run every flow: taken at the start,
  // even after hundreds of unmeasured requests, they were 1.5 to 2 times higher, which flattered every ratio.
  const last = (values: number[]) => values[values.length - 1] ?? Number.NaN;
  const trivialCpu = last(trivial.map((t) => t.cpu?.cpuMsPerRequest ?? Number.NaN));
  const trivialRps = last(trivial.map((t) => t.load?.perSecond ?? Number.NaN));
  const preflightCpu = last(input.floors.preflight);
  const bareCall = input.floors.bareCallMs;
  const cpuTarget = 1.5;
  const latencyTarget = 1.1;
  const coldTarget = 1.5;

  const out: string[] = [];
  out.push('## Latest run', '');
  out.push(
    markdownTable(
      ['', ''],
      [
        ['date (UTC)', new Date().toISOString().slice(0, 16).replace('T', ' ')],
        ['commit', commitOf()],
        ['mode', QUICK ? 'quick (small counts: the figures only show the harness works)' : 'full'],
        ['machine', `${cpus().length} × ${cpus()[0]?.model ?? 'unknown CPU'}, node ${process.version}, load average at start ${loadAtStart}`],
        ['server process tree', input.treeLines.join('<br>') || 'unknown'],
        ['duration', `${((performance.now() - runStarted) / 1000).toFixed(0)} s`],
      ],
    ),
    '',
  );

  out.push(
    '### Server CPU per request (zero-latency upstreams, sequential requests)',
    '',
    `Trivial route (${TRIVIAL_PATH}, a 404): ${trivial.map((t) => fixed(t.cpu?.cpuMsPerRequest ?? Number.NaN)).join(' ms at the start, ')} ms at the end; ` +
      `the figure at the end is the base of the ratios (the server then runs warm). Target: at most ${cpuTarget}×. ` +
      `Each flow ran ${SIZES.warmup} requests unmeasured first, the 404 and the preflight ${SIZES.baseWarmup}.`,
    '',
    `The floor of a flow is what it would cost if the service's code and its clients cost nothing: the cheapest ` +
      `route-handler request (${preflightFlow.name}, ${input.floors.preflight.map((ms) => fixed(ms)).join(' ms at the start, ')} ms at the end, the latter used) ` +
      `plus, per upstream call, one bare keep-alive GET from a process of its own (scripts/bench/bare-calls.ts): ` +
      `${fixed(bareCall)} ms. "Above the floor" is the service's own cost: its code, the WooCommerce and Stripe ` +
      `libraries, and the request and answer bodies. "Without Next.js" is the same flow with its requests handed ` +
      `straight to the route handlers in a process of their own (scripts/bench/in-process.ts): the service's code and ` +
      `its clients alone, upstream calls included; the server's figure less this one is what Next.js adds (${SIZES.inProcess} requests ` +
      `per flow: read differences under a millisecond as noise).`,
    '',
    markdownTable(
      ['flow', 'requests', 'CPU ms/request', '× trivial', 'target', 'upstream calls/request', 'floor ms', 'floor × trivial', 'above the floor ms', 'without Next.js ms'],
      figures.map(({ flow, cpu }) => {
        const cpuMs = cpu?.cpuMsPerRequest ?? Number.NaN;
        const calls = cpu?.upstreamCallsPerRequest ?? Number.NaN;
        const floor = preflightCpu + calls * bareCall;
        const r = ratio(cpuMs, trivialCpu);
        return [
          flow.name,
          String(cpu?.requests ?? '–'),
          fixed(cpuMs),
          fixed(r),
          r <= cpuTarget ? 'met' : 'not met',
          fixed(calls, 1),
          fixed(floor),
          fixed(ratio(floor, trivialCpu)),
          fixed(cpuMs - floor),
          fixed(input.withoutNext.get(flow.name) ?? Number.NaN),
        ];
      }),
    ),
    '',
  );

  out.push(
    `### Throughput at concurrency ${CONNECTIONS} (zero-latency upstreams, autocannon)`,
    '',
    `Trivial route: ${trivial.map((t) => fixed(t.load?.perSecond ?? Number.NaN, 0)).join(' requests/s at the start, ')} requests/s at the end, the base of the ratios.`,
    '',
    markdownTable(
      ['flow', 'requests', 'requests/s', '× trivial', 'p50 ms', 'p99 ms'],
      figures.map(({ flow, load }) => [
        flow.name,
        String(load?.requests ?? '–'),
        fixed(load?.perSecond ?? Number.NaN, 0),
        fixed(ratio(load?.perSecond ?? Number.NaN, trivialRps)),
        fixed(load?.p50Ms ?? Number.NaN, 0),
        fixed(load?.p99Ms ?? Number.NaN, 0),
      ]),
    ),
    '',
  );

  out.push(
    `### End-to-end latency with upstreams answering after ${UPSTREAM_LATENCY_MS} ms`,
    '',
    `Sequential upstream calls are counted per request from the stand-ins' call log (overlapping calls count once); ` +
      `the floor is that count × ${UPSTREAM_LATENCY_MS} ms; the ratio is the median over requests of latency / floor. Target: at most ${latencyTarget}×. ` +
      `"Upstream ms" is how long the request's upstream calls took as their proxies logged them (from arrival to the last byte sent): ` +
      `a proxy's timer fires a little late, so it is at least the floor; "× upstream" is latency over that time, and ` +
      `"own ms" the rest of the latency: the service's work, Next.js's, and the hops on loopback (medians over requests).`,
    '',
    markdownTable(
      ['flow', 'requests', 'sequential upstream calls', 'floor ms', 'p50 ms', '× floor', 'target', 'upstream ms', '× upstream', 'own ms'],
      figures.map(({ flow, slow }) => [
        flow.name,
        String(slow?.requests ?? '–'),
        String(slow?.sequentialCalls ?? '–'),
        fixed(slow?.floorMs ?? Number.NaN, 0),
        fixed(slow?.p50Ms ?? Number.NaN, 1),
        fixed(slow?.ratio ?? Number.NaN),
        !slow || !Number.isFinite(slow.ratio) ? '– (no upstream call)' : slow.ratio <= latencyTarget ? 'met' : 'not met',
        fixed(slow?.upstreamMs ?? Number.NaN, 1),
        fixed(slow?.ratioToUpstream ?? Number.NaN),
        fixed(slow?.ownMs ?? Number.NaN, 1),
      ]),
    ),
    '',
  );

  out.push(
    '### With Redis (REDIS_URL set) and without',
    '',
    input.redisNote ||
      `Sequential requests (${SIZES.variant} per flow), each configuration on a fresh server: "without" is the http store without Redis, "with" has REDIS_URL ` +
        'pointing at a throw-away redis-server. Redis commands per request are INFO commandstats deltas (the bench\'s own INFO left out); ' +
        '0 means the service sent none (shared state not on Redis in this build).',
    '',
    markdownTable(
      ['flow', 'mean ms without', 'mean ms with', 'added ms', 'CPU ms/request without', 'CPU ms/request with', 'Redis commands/request'],
      figures.map(({ flow, base, redis }) => [
        flow.name,
        fixed(base?.meanMs ?? Number.NaN, 1),
        fixed(redis?.meanMs ?? Number.NaN, 1),
        fixed((redis?.meanMs ?? Number.NaN) - (base?.meanMs ?? Number.NaN), 1),
        fixed(base?.cpuMsPerRequest ?? Number.NaN),
        fixed(redis?.cpuMsPerRequest ?? Number.NaN),
        fixed(redis?.redisCommandsPerRequest ?? Number.NaN, 1),
      ]),
    ),
    '',
  );

  out.push(
    '### The store over https',
    '',
    'WOOCOMMERCE_URL on https (a self-signed certificate made with openssl for this run, trusted through NODE_EXTRA_CA_CERTS; a node TLS terminator in front of the ' +
      'WooCommerce stand-in): the client sends Basic credentials instead of signing each request with OAuth 1.0a. Compared with the http store on a fresh server ' +
      `(the "without" of the Redis table), ${SIZES.variant} sequential requests per flow. Flows that never call the store show no difference.`,
    '',
    markdownTable(
      ['flow', 'mean ms http', 'mean ms https', 'CPU ms/request http', 'CPU ms/request https'],
      figures.map(({ flow, base, https }) => [
        flow.name,
        fixed(base?.meanMs ?? Number.NaN, 1),
        fixed(https?.meanMs ?? Number.NaN, 1),
        fixed(base?.cpuMsPerRequest ?? Number.NaN),
        fixed(https?.cpuMsPerRequest ?? Number.NaN),
      ]),
    ),
    '',
  );

  out.push(renderColdStarts(cold, coldTarget));

  const fullAt = limiterMemory.find((point) => point.held >= LIMITER_CLIENTS);
  const lastHeap = limiterMemory[limiterMemory.length - 1];
  const routeFullAt = input.routeMemory.find((point) => point.held >= LIMITER_CLIENTS);
  const routeLast = input.routeMemory[input.routeMemory.length - 1];
  const firstRss = memory[1]?.rssKb ?? Number.NaN;
  const lastRss = memory[memory.length - 1]?.rssKb ?? Number.NaN;
  const serverSent = memory[memory.length - 1]?.after ?? 0;
  out.push(
    '### Memory after many distinct clients',
    '',
    `Three levels. **The rate limiter itself** (scripts/bench/limiter-memory.ts, its own process): the in-process limiter the server uses, ` +
      `fed ${MEMORY_REQUESTS} distinct clients keyed as the route wrapper keys them (client-ip.ts, from X-Forwarded-For), ` +
      `live heap after a full GC. It keeps at most ${LIMITER_CLIENTS.toLocaleString('en')} clients (lib/security/rate-limit.ts): ` +
      (fullAt && lastHeap
        ? `the heap grows until it is full, then stays flat: ${fixed((lastHeap.heapKb - fullAt.heapKb) / 1024, 1)} MiB between ${fullAt.clients} and ${lastHeap.clients} clients.`
        : 'it never filled in this run.'),
    '',
    markdownTable(
      ['clients so far', 'clients held', 'live heap MiB'],
      limiterMemory.map(({ clients, held, heapKb }) => [String(clients), String(held), (heapKb / 1024).toFixed(1)]),
    ),
    '',
    `**The route handler** (scripts/bench/route-memory.ts, its own process): POST /api/cardprovider/webhook's handler called without Next.js, ` +
      `${MEMORY_REQUESTS} requests each from a new client address (the limiter counts it, then 400: no signature), live heap after a full GC: ` +
      `all the service's own code keeps per request. ` +
      (routeFullAt && routeLast
        ? `Once the limiter is full, ${fixed((routeLast.heapKb - routeFullAt.heapKb) / 1024, 1)} MiB between ${routeFullAt.clients} and ${routeLast.clients} clients.`
        : 'The limiter never filled in this run.'),
    '',
    markdownTable(
      ['clients so far', 'clients held', 'live heap MiB'],
      input.routeMemory.map(({ clients, held, heapKb }) => [String(clients), String(held), (heapKb / 1024).toFixed(1)]),
    ),
    '',
    `**Through the server**: POST /api/cardprovider/webhook without a signature (400 after the rate limiter counted the client), each from a new client address, ` +
      `at concurrency ${CONNECTIONS}; resident memory (VmRSS) of the server process tree. ${serverSent} requests in the ${MEMORY_SECONDS} s allowed ` +
      `(Next.js spends a few ms of CPU on any request: the 100,000 take minutes, \`npm run bench -- --memory-seconds 0\` sends them all); ` +
      `growth after the first checkpoint: ${fixed((lastRss - firstRss) / 1024, 1)} MiB. This part shows the server's RSS settling after its first requests; ` +
      'the two parts above show where the per-client growth stops.',
    '',
    markdownTable(
      ['requests so far', 'RSS MiB'],
      memory.map(({ after, rssKb }) => [String(after), (rssKb / 1024).toFixed(1)]),
    ),
  );
  return out.join('\n');
}

function renderColdStarts(cold: ColdStart[], coldTarget: number): string {
  const base = (pick: (entry: ColdStart) => number[]) => median(cold[0] ? pick(cold[0]) : []);
  const plainBase = base((c) => c.ms);
  const redisBase = base((c) => c.redisMs);
  const plainCpuBase = base((c) => c.cpuMs);
  const redisCpuBase = base((c) => c.redisCpuMs);
  const verdict = (r: number) => (Number.isFinite(r) ? (r <= coldTarget ? 'met' : 'not met') : '–');
  const list = (values: number[]) => (values.length ? values.map((t) => t.toFixed(0)).join(', ') : '–');
  return [
    '### Cold start and server bundle size',
    '',
    `A fresh \`next start\` per route and repeat, from spawning the process to the answer of the route's first request (median of ${COLD_REPEATS}). ` +
      `That request is a real one, its main flow's on a fresh order (payment-intent: a new intent; the webhooks: a card success, a shipment), ` +
      `so what a route loads on first use counts; the trivial route's is its 404. Each route is measured without Redis and with REDIS_URL ` +
      `set (a throw-away redis-server), the two taking turns, each against the trivial route of its own series. The instance starts loading and ` +
      `connecting the Redis client, and loading the Stripe SDK, when it starts (instrumentation.ts, lib/preload.ts, not awaited), so a first ` +
      `request waits only for what is not ready yet. "CPU" is the server process tree's CPU time at that first answer (from /proc): ` +
      `on a shared machine it moves less than the wall time. ` +
      `Bundle: the route's \`route.js\` and the chunks it loads at start under .next/server (packages from node_modules, loaded at run time, ` +
      `and chunks imported on first use are not in it). Target: at most ${coldTarget}× the trivial route, with REDIS_URL set.`,
    '',
    markdownTable(
      ['route', 'ms to first answer', '× trivial', 'CPU × trivial', 'with REDIS_URL ms', '× trivial', 'CPU × trivial', 'target (REDIS_URL)', 'bundle kB'],
      cold.map(({ route, ms, redisMs, cpuMs, redisCpuMs }, index) => {
        const redis = ratio(median(redisMs), redisBase);
        const bytes = index === 0 ? undefined : bundleBytes(route);
        return [
          route,
          list(ms),
          fixed(ratio(median(ms), plainBase)),
          fixed(ratio(median(cpuMs), plainCpuBase)),
          list(redisMs),
          fixed(redis),
          fixed(ratio(median(redisCpuMs), redisCpuBase)),
          index === 0 ? '' : verdict(redis),
          bytes === undefined ? '–' : (bytes / 1024).toFixed(0),
        ];
      }),
    ),
    '',
  ].join('\n');
}

function docIntro(previous: string | undefined): string {
  const at = previous?.search(/^## Latest run\b/m) ?? -1;
  if (previous && at > 0) return previous.slice(0, at);
  return '# Benchmarks\n\nWritten by `npm run bench` (scripts/bench/).\n';
}

/** `--transports`: CPU per upstream call through each HTTP client (scripts/bench/transports.ts). Writes nothing. */
async function transportsRun(): Promise<void> {
  progress(`transports: ${cpus().length} cores, node ${process.version}, load average ${loadAverage()}`);
  const { transportFigures } = await import('./transports');
  const figures = await transportFigures();
  console.log(`\n${markdownTable(['client, one call', 'CPU ms per call (best of 3 rounds of 1,500)'], figures.map(({ name, msPerCall }) => [name, fixed(msPerCall, 3)]))}\n`);
}

/** `--cold`: the cold starts alone (both series), printed; writes nothing. */
async function coldRun(): Promise<void> {
  progress(`cold starts: ${cpus().length} cores, node ${process.version}, load average ${loadAverage()}`);
  buildApp(progress);
  const standIns = await startStandIns();
  opened.push(standIns);
  try {
    console.log(`\n${renderColdStarts(await coldStarts(standIns), 1.5)}`);
  } finally {
    await closeAll();
  }
}

/** `--load`: the store shielding under load (scripts/bench/load.ts); writes its section of docs/benchmarks.md. */
async function loadMode(): Promise<void> {
  progress(`load: ${cpus().length} cores, node ${process.version}, load average ${loadAverage()}`);
  if (!existsSync(REDIS_SERVER)) throw new Error(`${REDIS_SERVER} not found: the load mode needs redis-server (REDIS_SERVER_BIN)`);
  buildApp(progress);
  const { loadRun, renderLoadReport } = await import('./load');
  const standIns = await startStandIns();
  opened.push(standIns);
  const redis = await startRedis();
  opened.push(redis);
  let report: string;
  try {
    const results = await loadRun({
      standIns,
      redis,
      quick: QUICK,
      progress,
      serviceEnv: (extra) => serviceEnv(standIns, extra),
      startServer: async (name, env) => {
        const server = await spawnServer(name, env);
        opened.push(server);
        await firstAnswer(trivialProbe(server.url));
        return server;
      },
    });
    report = renderLoadReport(results, {
      date: new Date().toISOString().slice(0, 16).replace('T', ' '),
      commit: commitOf(),
      machine: `${cpus().length} × ${cpus()[0]?.model ?? 'unknown CPU'}, load average at start ${loadAtStart}`,
      duration: `${((performance.now() - runStarted) / 1000).toFixed(0)} s`,
      quick: QUICK,
    });
  } finally {
    await closeAll();
  }
  console.log(`\n${report}\n`);
  if (!QUICK || options.write) {
    const previous = existsSync(DOC) ? readFileSync(DOC, 'utf8') : docIntro(undefined);
    writeFileSync(DOC, replaceSection(previous, 'Load test', report, 'Latest run'));
    progress(`wrote the load section of ${DOC}`);
  }
  progress('done');
}

const mode = options.load ? loadMode : options.cold ? coldRun : options.transports ? transportsRun : options.profile ? profileRun : main;
mode().catch(async (error: unknown) => {
  console.error(`[bench] failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  console.error(`[bench] server logs: ${ARTIFACTS}`);
  process.exit(1);
});
