/**
 * `npm run bench`: the service's own cost per request, measured from outside
 * on the production build, each figure as a ratio to Next.js's floor (a 404
 * on the same server in the same run), and the comparisons between
 * configurations run side by side (scripts/bench/paired.ts). See
 * docs/benchmarks.md for what each table means; this file is the command
 * line: it chooses the counts, starts the processes, runs the measurements
 * (scripts/bench/measure.ts, paired.ts, load.ts) and writes the report
 * (scripts/bench/report.ts) into that document's "Latest run" part.
 *
 *   npm run bench                  full run (about 6 minutes on 2 cores), writes docs/benchmarks.md
 *   npm run bench -- --quick       small counts, to check the harness end to end; writes nothing
 *   npm run bench -- --quick --write   ... and writes the document anyway
 *   --memory-requests N            distinct clients of the memory check (default 100000, quick 3000): all of
 *                                  them through the rate limiter itself (scripts/bench/limiter-memory.ts), and
 *                                  as many as fit in --memory-seconds through the server
 *   --memory-seconds S             the server part's time limit (default 20, quick 10; 0: send them all).
 *                                  Next.js spends a few ms of CPU on any request, so 100,000 of them take
 *                                  minutes, longer than the whole run may.
 *   --paired-rounds N              rounds of the paired comparisons (default 10, quick 3)
 *   --paired-block N, --paired-warmup N   with --against: requests per block (default 5) and unmeasured requests per
 *                                  server and flow first (default 20): more of both, steadier figures
 *   npm run bench -- --paired [--quick] [--flows NAME]   only the paired comparisons (without and with Redis,
 *                                  Redis at 1 and 2 ms RTT, the https store), printed; writes nothing
 *   npm run bench -- --profile [--quick] [--flows NAME] [--redis]   the server under node --cpu-prof: CPU per flow and
 *                                  where it went (with --redis: REDIS_URL set, a redis-server of its own on loopback)
 *   npm run bench -- --load [--quick] [--write]   the store shielding under 1×, 2× and 4× the store's capacity
 *                                  (scripts/bench/load.ts, a few minutes); writes its own section of docs/benchmarks.md
 *   npm run bench -- --cold [--cold-repeats N]   only the cold starts, without and with REDIS_URL; writes nothing
 *   npm run bench -- --transports  CPU per upstream call through each HTTP client; writes nothing
 *   npm run bench -- --against REF [--quick] [--write] [--flows NAME]   the build of REF and of the current tree
 *                                  side by side, CPU per request per flow old against new (scripts/bench/against.ts);
 *                                  with --write, its section of docs/benchmarks.md
 *
 * Processes: the load generator is this one; the stand-ins (scripts/bench/stand-ins.ts),
 * each `next start`, each `redis-server` and the delay proxy run in their own, so a
 * server's CPU time (/proc, summed over its process tree) is the server's alone.
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { fixed, markdownTable, median, percentile, replaceLatest, replaceSection } from './figures';
import { benchFlows, memoryProbe, preflightFlow, trivialFlow, type Flow } from './flows';
import {
  bareCallCpuMs,
  coldStarts,
  CONNECTIONS,
  heapPoints,
  inProcessCpu,
  latency,
  SAMPLE_MS,
  sequential,
  serviceEnv,
  startReady,
  throughput,
  trivialProbe,
  type ColdStart,
  type LimiterPoint,
} from './measure';
import { againstRun, renderAgainst, SECTION_TITLE } from './against';
import { pairedRun, type PairedConfiguration } from './paired';
import { describeTree, treeRssKb } from './process-stats';
import { renderShares, summarizeProfiles } from './profile-summary';
import { docIntro, renderColdStarts, renderPaired, renderReport, TARGETS, type Floors, type FlowFigures, type PairedReport, type RunSizes } from './report';
import { closeAll, commitOf, keep, loadAtStart, loadAverage, machineLine, nowUtc, progress, secondsSinceStart } from './session';
import {
  ARTIFACTS,
  buildApp,
  firstAnswer,
  makeCertificate,
  REDIS_SERVER,
  redisRoundTripMs,
  ROOT,
  spawnServer,
  startDelayProxy,
  startRedis,
  startStandIns,
  type StandInsProcess,
} from './world';

const { values: options } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    write: { type: 'boolean', default: false },
    'memory-requests': { type: 'string' },
    'memory-seconds': { type: 'string' },
    'cold-repeats': { type: 'string' },
    'paired-rounds': { type: 'string' },
    'paired-block': { type: 'string' },
    'paired-warmup': { type: 'string' },
    transports: { type: 'boolean', default: false },
    profile: { type: 'boolean', default: false },
    paired: { type: 'boolean', default: false },
    against: { type: 'string' },
    flows: { type: 'string' },
    load: { type: 'boolean', default: false },
    cold: { type: 'boolean', default: false },
    redis: { type: 'boolean', default: false },
  },
});
const QUICK = options.quick === true;
const SIZES = QUICK
  ? { cpu: 15, warmup: 5, baseWarmup: 5, serverWarmup: 1, inProcess: 15, throughput: 40, latency: 3, pairedRounds: 3, pairedBlock: 2, pairedWarmup: 3, memory: 3000, coldRepeats: 1 }
  : { cpu: 200, warmup: 60, baseWarmup: 400, serverWarmup: 10, inProcess: 100, throughput: 200, latency: 12, pairedRounds: 10, pairedBlock: 4, pairedWarmup: 20, memory: 100_000, coldRepeats: 3 };
const COLD_REPEATS = Number(options['cold-repeats'] ?? SIZES.coldRepeats);
const PAIRED_ROUNDS = Number(options['paired-rounds'] ?? SIZES.pairedRounds);
const MEMORY_REQUESTS = Number(options['memory-requests'] ?? SIZES.memory);
const MEMORY_SECONDS = Number(options['memory-seconds'] ?? (QUICK ? 10 : 20));
/** Requests between two RSS readings of the server part. */
const MEMORY_SERVER_CHUNK = QUICK ? 500 : 2500;
/** Clients between two heap readings of the limiter part. */
const MEMORY_LIMITER_CHECKPOINT = QUICK ? 500 : 10_000;
/** The round trips of a managed Redis the delay proxy imitates, in ms. */
const MANAGED_REDIS_RTTS = [1, 2];
const DOC = join(ROOT, 'docs', 'benchmarks.md');

const selectedFlows = (): Flow[] => benchFlows().filter((flow) => !options.flows || flow.name.includes(options.flows));

const RUN_SIZES: RunSizes = {
  quick: QUICK,
  warmup: SIZES.warmup,
  baseWarmup: SIZES.baseWarmup,
  inProcess: SIZES.inProcess,
  memoryRequests: MEMORY_REQUESTS,
  memorySeconds: MEMORY_SECONDS,
  coldRepeats: COLD_REPEATS,
};

// ---------------------------------------------------------------- the paired comparisons

/**
 * Starts every configuration's server at once (the http store without Redis,
 * the base; with a Redis of its own on loopback; with one behind the delay
 * proxy at each managed round trip; the store on https), runs the flows on
 * them in rotating blocks, and stops them.
 */
async function pairedComparisons(standIns: StandInsProcess, tlsCert: string, flows: Flow[]): Promise<PairedReport> {
  const specs: { key: string; label: string; env: Record<string, string>; rtt?: number; redis?: boolean }[] = [
    { key: 'base', label: 'http store, no Redis', env: {} },
    { key: 'redis', label: 'REDIS_URL, a redis-server on loopback', env: {}, redis: true },
    ...MANAGED_REDIS_RTTS.map((rtt) => ({ key: `redis-${rtt}ms`, label: `REDIS_URL through the delay proxy at ${rtt} ms RTT`, env: {}, redis: true, rtt })),
    ...(standIns.woocommerceHttps
      ? [{ key: 'https', label: 'the store on https (Basic credentials, no OAuth signing), no Redis', env: { WOOCOMMERCE_URL: standIns.woocommerceHttps, NODE_EXTRA_CA_CERTS: tlsCert } }]
      : []),
  ];
  const withRedis = existsSync(REDIS_SERVER);
  const wanted = specs.filter((spec) => withRedis || !spec.redis);
  if (!withRedis) progress(`${REDIS_SERVER} not found: the paired comparisons run without the Redis configurations`);
  const redises = new Map<string, Awaited<ReturnType<typeof startRedis>>>();
  for (const spec of wanted) if (spec.redis) redises.set(spec.key, keep(await startRedis()));
  const delayed = wanted.filter((spec) => spec.rtt !== undefined);
  const proxy = delayed.length
    ? keep(await startDelayProxy(delayed.map((spec) => ({ targetPort: redises.get(spec.key)?.port as number, roundTripMs: spec.rtt as number }))))
    : undefined;
  const redisPort = (key: string) => {
    const at = delayed.findIndex((spec) => spec.key === key);
    return at >= 0 ? (proxy?.ports[at] as number) : (redises.get(key)?.port as number);
  };
  progress(`paired: starting ${wanted.length} servers side by side (${wanted.map((s) => s.key).join(', ')})`);
  const configurations: PairedConfiguration[] = await Promise.all(
    wanted.map(async (spec) => {
      const redis = redises.get(spec.key);
      const env = redis ? { ...spec.env, REDIS_URL: `redis://127.0.0.1:${redisPort(spec.key)}` } : spec.env;
      const server = keep(await startReady(`paired-${spec.key}`, standIns, serviceEnv(standIns, env), [], SIZES.serverWarmup));
      return {
        key: spec.key,
        label: spec.label,
        server,
        ...(redis ? { redis, redisPort: redisPort(spec.key) } : {}),
        ...(spec.rtt !== undefined ? { delayedRoundTripMs: spec.rtt } : {}),
      };
    }),
  );
  const loopbackRoundTripMs = redises.size ? await redisRoundTripMs([...redises.values()][0]?.port as number) : Number.NaN;
  const sizes = { rounds: PAIRED_ROUNDS, blockSize: SIZES.pairedBlock, warmup: SIZES.pairedWarmup };
  const roundTrips = new Map<string, number[]>();
  const results = await pairedRun(configurations, standIns, flows, sizes, roundTrips);
  for (const c of configurations) {
    const times = roundTrips.get(c.key);
    if (!times?.length) continue;
    c.redisRoundTripMs = median(times);
    progress(`  ${c.key}: Redis round trip ${fixed(c.redisRoundTripMs, 3)} ms (median of ${times.length} PINGs between the rounds), p90 ${fixed(percentile(times, 90), 3)} ms`);
  }
  for (const c of configurations) await c.server.close();
  await proxy?.close();
  for (const redis of redises.values()) await redis.close();
  return {
    configurations: configurations.map(({ server: _server, redis: _redis, redisPort: _port, ...rest }) => rest),
    flows: results,
    ...sizes,
    loopbackRoundTripMs,
  };
}

// ---------------------------------------------------------------- the modes

/**
 * `--profile`: one server under `node --cpu-prof`, the sequential CPU figure of
 * each flow (or of those whose name contains `--flows`), then where the
 * server's CPU went, from the profiles it wrote on exit. With `--redis` the
 * server has REDIS_URL, a redis-server of its own on loopback: the Redis
 * path's CPU. Writes nothing to docs/.
 */
async function profileRun(): Promise<void> {
  progress(`profile run${options.redis ? ' with REDIS_URL' : ''} on ${machineLine()}`);
  buildApp(progress);
  const tls = await makeCertificate(join(ARTIFACTS, 'tls'));
  const standIns = keep(await startStandIns(tls));
  const dir = join(ARTIFACTS, 'profiles');
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  try {
    // --cpu-prof is refused in NODE_OPTIONS, so a child `next start` forks would run unprofiled: Next.js 16 serves from this process.
    const redis = options.redis ? keep(await startRedis()) : undefined;
    const env = redis ? serviceEnv(standIns, { REDIS_URL: redis.url }) : serviceEnv(standIns);
    const server = keep(await startReady('profile', standIns, env, ['--cpu-prof', `--cpu-prof-dir=${dir}`], SIZES.serverWarmup));
    const trivialCpu = (await sequential(server, standIns, trivialFlow, SIZES.cpu * 2, undefined, SIZES.warmup)).cpuMsPerRequest;
    progress(`  trivial 404: ${fixed(trivialCpu)} ms CPU/request`);
    for (const flow of selectedFlows()) {
      const result = await sequential(server, standIns, flow, SIZES.cpu, undefined, SIZES.warmup);
      progress(`  ${flow.name}: ${fixed(result.cpuMsPerRequest)} ms CPU/request, ${fixed(result.cpuMsPerRequest / trivialCpu)}× trivial`);
    }
    await server.close();
  } finally {
    await closeAll();
  }
  console.log(renderShares(summarizeProfiles(dir)));
  progress(`profiles in ${dir} (open them in Chrome DevTools or speedscope)`);
}

/** `--paired`: the paired comparisons alone (or those of the flows named by `--flows`), printed; writes nothing. */
async function pairedMode(): Promise<void> {
  progress(`paired comparisons: ${machineLine()}, load average ${loadAverage()}`);
  buildApp(progress);
  const tls = await makeCertificate(join(ARTIFACTS, 'tls'));
  const standIns = keep(await startStandIns(tls));
  try {
    console.log(`\n${renderPaired(await pairedComparisons(standIns, tls.cert, selectedFlows()))}`);
  } finally {
    await closeAll();
  }
  progress('done');
}

async function main(): Promise<void> {
  progress(`${QUICK ? 'quick' : 'full'} run on ${machineLine()}, load average ${loadAtStart}`);
  buildApp(progress);
  const tls = await makeCertificate(join(ARTIFACTS, 'tls'));
  const standIns = keep(await startStandIns(tls));
  const figures: FlowFigures[] = benchFlows().map((flow) => ({ flow }));
  const trivial: FlowFigures[] = [];
  const floors: Floors = { preflight: [], bareCallMs: Number.NaN };
  let withoutNext = new Map<string, number>();
  let cold: ColdStart[] = [];
  const memory: { after: number; rssKb: number }[] = [];
  let limiterMemory: LimiterPoint[] = [];
  let routeMemory: LimiterPoint[] = [];
  let treeLines: string[] = [];
  let paired: PairedReport | undefined;

  try {
    // 1. Plain http store, zero-latency upstreams: CPU, throughput, then 40 ms latency, flow by flow.
    progress('server: plain http store, no Redis');
    const server = keep(await startReady('plain', standIns, serviceEnv(standIns), [], SIZES.serverWarmup));
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
      entry.cpu = await sequential(server, standIns, entry.flow, SIZES.cpu, undefined, SIZES.warmup);
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
    const memoryDeadline = performance.now() + MEMORY_SECONDS * 1000;
    memory.push({ after: 0, rssKb: treeRssKb(server.pid) });
    for (let sent = 0; sent < MEMORY_REQUESTS; sent += MEMORY_SERVER_CHUNK) {
      if (MEMORY_SECONDS > 0 && performance.now() > memoryDeadline) {
        progress(`  time limit reached after ${sent} requests`);
        break;
      }
      const amount = Math.min(MEMORY_SERVER_CHUNK, MEMORY_REQUESTS - sent);
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

    // 4. The comparisons between configurations, their servers side by side on the same requests in rotating blocks.
    paired = await pairedComparisons(standIns, tls.cert, benchFlows());

    // 5. Cold start: a fresh `next start` per route, from spawn to that route's first answer, without and with REDIS_URL.
    cold = await coldStarts(standIns, COLD_REPEATS);
  } finally {
    await closeAll();
  }

  const report = renderReport({
    sizes: RUN_SIZES,
    ...(paired ? { paired } : {}),
    pairedNote: '',
    figures,
    trivial,
    floors,
    withoutNext,
    cold,
    memory,
    limiterMemory,
    routeMemory,
    treeLines,
  });
  console.log(`\n${report}\n`);
  if (!QUICK || options.write) {
    const previous = existsSync(DOC) ? readFileSync(DOC, 'utf8') : undefined;
    writeFileSync(DOC, replaceLatest(previous, docIntro(previous), report));
    progress(`wrote ${DOC}`);
  }
  progress('done');
}

/** `--transports`: CPU per upstream call through each HTTP client (scripts/bench/transports.ts). Writes nothing. */
async function transportsRun(): Promise<void> {
  progress(`transports: ${machineLine()}, load average ${loadAverage()}`);
  const { transportFigures } = await import('./transports');
  const figures = await transportFigures();
  console.log(`\n${markdownTable(['client, one call', 'CPU ms per call (best of 3 rounds of 1,500)'], figures.map(({ name, msPerCall }) => [name, fixed(msPerCall, 3)]))}\n`);
}

/** `--cold`: the cold starts alone (both series), printed; writes nothing. */
async function coldRun(): Promise<void> {
  progress(`cold starts: ${machineLine()}, load average ${loadAverage()}`);
  buildApp(progress);
  const standIns = keep(await startStandIns());
  try {
    console.log(`\n${renderColdStarts(await coldStarts(standIns, COLD_REPEATS), TARGETS.cold, COLD_REPEATS)}`);
  } finally {
    await closeAll();
  }
}

/** `--load`: the store shielding under load (scripts/bench/load.ts); writes its section of docs/benchmarks.md. */
async function loadMode(): Promise<void> {
  progress(`load: ${machineLine()}, load average ${loadAverage()}`);
  if (!existsSync(REDIS_SERVER)) throw new Error(`${REDIS_SERVER} not found: the load mode needs redis-server (REDIS_SERVER_BIN)`);
  buildApp(progress);
  const { loadRun, renderLoadReport } = await import('./load');
  const standIns = keep(await startStandIns());
  const redis = keep(await startRedis());
  let report: string;
  try {
    const results = await loadRun({
      standIns,
      redis,
      quick: QUICK,
      progress,
      serviceEnv: (extra) => serviceEnv(standIns, extra),
      startServer: async (name, env) => {
        const server = keep(await spawnServer(name, env));
        await firstAnswer(trivialProbe(server.url));
        return server;
      },
    });
    report = renderLoadReport(results, {
      date: nowUtc(),
      commit: commitOf(),
      machine: `${machineLine()}, load average at start ${loadAtStart}`,
      duration: `${secondsSinceStart().toFixed(0)} s`,
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

/** `--against <ref>`: the old build and the new side by side (scripts/bench/against.ts); --write: its section of the doc. */
async function againstMode(ref: string): Promise<void> {
  let section: string;
  try {
    const report = await againstRun({
      ref,
      quick: QUICK,
      sizes: {
        rounds: Number(options['paired-rounds'] ?? (QUICK ? 3 : 20)),
        blockSize: Number(options['paired-block'] ?? (QUICK ? 2 : 5)),
        warmup: Number(options['paired-warmup'] ?? (QUICK ? 3 : 20)),
      },
      ...(options.flows ? { flows: options.flows } : {}),
      bareCalls: SIZES.cpu * 10,
      serverWarmup: SIZES.serverWarmup,
      arguments: [
        ...(['paired-rounds', 'paired-block', 'paired-warmup'] as const).flatMap((name) => (options[name] ? [`--${name}`, options[name]] : [])),
        ...(options.flows ? ['--flows', JSON.stringify(options.flows)] : []),
      ],
    });
    section = renderAgainst(report);
  } finally {
    await closeAll();
  }
  console.log(`\n${section}\n`);
  if (options.write) {
    const previous = existsSync(DOC) ? readFileSync(DOC, 'utf8') : docIntro(undefined);
    writeFileSync(DOC, replaceSection(previous, SECTION_TITLE, section, 'Latest run'));
    progress(`wrote the "${SECTION_TITLE}" section of ${DOC}`);
  }
  progress('done');
}

const against = options.against;
const mode = against
  ? () => againstMode(against)
  : options.load
    ? loadMode
    : options.cold
      ? coldRun
      : options.transports
        ? transportsRun
        : options.profile
          ? profileRun
          : options.paired
            ? pairedMode
            : main;
mode().catch(async (error: unknown) => {
  console.error(`[bench] failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  console.error(`[bench] server logs: ${ARTIFACTS}`);
  await closeAll();
  process.exit(1);
});
