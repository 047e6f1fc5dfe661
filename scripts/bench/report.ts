/**
 * The bench's report: the "Latest run" part of docs/benchmarks.md, written
 * from the figures scripts/bench/measure.ts and paired.ts took. Pure but for
 * the clock and git (the date, the commit).
 */
import { TRIVIAL_PATH, preflightFlow, type Flow } from './flows';
import { fixed, formatDifference, markdownTable, median, pairedDifference, percentile, ratio, verdict, type Difference } from './figures';
import { CONNECTIONS, LIMITER_CLIENTS, UPSTREAM_LATENCY_MS, type ColdStart, type LimiterPoint, type Latency, type Sequential, type Throughput } from './measure';
import type { Block, PairedConfiguration, PairedFlow } from './paired';
import { commitOf, loadAtStart, machineLine, nowUtc, secondsSinceStart } from './session';
import { PING_SPACING_MS } from './world';

/** The limits the bench holds the service to; each is printed with its figure and met or not met. */
export const TARGETS = {
  /** Server CPU per request, × the trivial route's. */
  cpu: 1.5,
  /** End-to-end latency with 40 ms upstreams, × the round-trip floor. */
  latency: 1.1,
  /** Cold start to the first real answer with REDIS_URL set, × the trivial route's. */
  cold: 1.5,
  /** What Redis at a round trip of RTT may add to a request: 2 × RTT + this, in ms (p50, paired). */
  redisSlackMs: 1,
  /** Admitted requests' p99 at 4 × the store's capacity, × the unloaded p99 (scripts/bench/load.ts). */
  loadP99: 1.2,
} as const;

export interface FlowFigures {
  flow: Flow;
  cpu?: Sequential;
  load?: Throughput;
  slow?: Latency;
}

export interface RunSizes {
  quick: boolean;
  warmup: number;
  baseWarmup: number;
  inProcess: number;
  memoryRequests: number;
  memorySeconds: number;
  coldRepeats: number;
}

export interface PairedReport {
  configurations: Omit<PairedConfiguration, 'server' | 'redis' | 'redisPort'>[];
  flows: PairedFlow[];
  rounds: number;
  blockSize: number;
  warmup: number;
  /** The round trip to a redis-server on loopback without the proxy, measured the same way. */
  loopbackRoundTripMs: number;
}

/** What no implementation of a flow can go below on this server and machine. */
export interface Floors {
  /** CPU per request of the cheapest route-handler request (the CORS preflight), at the start and at the end. */
  preflight: number[];
  /** CPU of one bare keep-alive upstream call, in a process of its own. */
  bareCallMs: number;
}

export function renderReport(input: {
  sizes: RunSizes;
  paired?: PairedReport;
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
  /** Why the paired comparisons did not run, when they did not. */
  pairedNote: string;
}): string {
  const { figures, trivial, cold, memory, limiterMemory } = input;
  // The bases are the figures taken at the end, on a server that has run every flow: taken at the start,
  // even after hundreds of unmeasured requests, they were 1.5 to 2 times higher, which flattered every ratio.
  const last = (values: number[]) => values[values.length - 1] ?? Number.NaN;
  const trivialCpu = last(trivial.map((t) => t.cpu?.cpuMsPerRequest ?? Number.NaN));
  const trivialRps = last(trivial.map((t) => t.load?.perSecond ?? Number.NaN));
  const preflightCpu = last(input.floors.preflight);
  const bareCall = input.floors.bareCallMs;
  const { sizes } = input;
  const cpuTarget = TARGETS.cpu;
  const latencyTarget = TARGETS.latency;
  const coldTarget = TARGETS.cold;

  const out: string[] = [];
  out.push('## Latest run', '');
  out.push(
    markdownTable(
      ['', ''],
      [
        ['date (UTC)', nowUtc()],
        ['commit', commitOf()],
        ['mode', sizes.quick ? 'quick (small counts: the figures only show the harness works)' : 'full'],
        ['machine', `${machineLine()}, load average at start ${loadAtStart}`],
        ['server process tree', input.treeLines.join('<br>') || 'unknown'],
        ['duration', `${secondsSinceStart().toFixed(0)} s`],
      ],
    ),
    '',
  );

  const worst = <T>(items: T[], value: (item: T) => number): { item: T | undefined; value: number } => {
    let found: { item: T | undefined; value: number } = { item: undefined, value: Number.NaN };
    for (const item of items) {
      const v = value(item);
      if (Number.isFinite(v) && !(v <= found.value)) found = { item, value: v };
    }
    return found;
  };
  const cpuWorst = worst(figures, ({ cpu }) => ratio(cpu?.cpuMsPerRequest ?? Number.NaN, trivialCpu));
  const slowWorst = worst(figures, ({ slow }) => slow?.ratio ?? Number.NaN);
  const coldRoutes = cold.slice(1);
  const coldBase = median(cold[0]?.redisMs ?? []);
  const coldWorst = worst(coldRoutes, (c) => ratio(median(c.redisMs), coldBase));
  const rows: string[][] = [
    [
      `server CPU per request ≤ ${cpuTarget} × the trivial route's, every flow`,
      cpuWorst.item ? `worst ${fixed(cpuWorst.value)} × (${cpuWorst.item.flow.name})` : '–',
      verdict(cpuWorst.value, cpuTarget),
    ],
    [
      `end to end at ${UPSTREAM_LATENCY_MS} ms upstreams ≤ ${latencyTarget} × the round-trip floor, every flow`,
      slowWorst.item ? `worst ${fixed(slowWorst.value)} × (${slowWorst.item.flow.name})` : '–',
      verdict(slowWorst.value, latencyTarget),
    ],
    ...(input.paired ? redisTargetRows(input.paired) : [[`Redis at 1–2 ms RTT adds ≤ 2 × RTT + ${TARGETS.redisSlackMs} ms`, input.pairedNote || 'not run', '–']]),
    [
      `cold start to the first real answer with REDIS_URL ≤ ${coldTarget} × the trivial route's, every route`,
      coldWorst.item ? `worst ${fixed(coldWorst.value)} × (${coldWorst.item.route})` : '–',
      verdict(coldWorst.value, coldTarget),
    ],
    [
      `at 4 × the store's capacity, admitted requests' p99 ≤ ${TARGETS.loadP99} × the unloaded p99, no fact lost`,
      'written by `--load`: see "Load test" above',
      'see there',
    ],
  ];
  out.push('### Targets', '', markdownTable(['target', 'figure', 'state'], rows), '');

  out.push(
    '### Server CPU per request (zero-latency upstreams, sequential requests)',
    '',
    `Trivial route (${TRIVIAL_PATH}, a 404): ${trivial.map((t) => fixed(t.cpu?.cpuMsPerRequest ?? Number.NaN)).join(' ms at the start, ')} ms at the end; ` +
      `the figure at the end is the base of the ratios (the server then runs warm). Target: at most ${cpuTarget}×. ` +
      `Each flow ran ${sizes.warmup} requests unmeasured first, the 404 and the preflight ${sizes.baseWarmup}.`,
    '',
    `The floor of a flow is what it would cost if the service's code and its clients cost nothing: the cheapest ` +
      `route-handler request (${preflightFlow.name}, ${input.floors.preflight.map((ms) => fixed(ms)).join(' ms at the start, ')} ms at the end, the latter used) ` +
      `plus, per upstream call, one bare keep-alive GET from a process of its own (scripts/bench/bare-calls.ts): ` +
      `${fixed(bareCall)} ms. "Above the floor" is the service's own cost: its code, the WooCommerce and Stripe ` +
      `libraries, and the request and answer bodies. "Without Next.js" is the same flow with its requests handed ` +
      `straight to the route handlers in a process of their own (scripts/bench/in-process.ts): the service's code and ` +
      `its clients alone, upstream calls included; the server's figure less this one is what Next.js adds (${sizes.inProcess} requests ` +
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
          verdict(r, cpuTarget),
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
        !slow || !Number.isFinite(slow.ratio) ? '– (no upstream call)' : verdict(slow.ratio, latencyTarget),
        fixed(slow?.upstreamMs ?? Number.NaN, 1),
        fixed(slow?.ratioToUpstream ?? Number.NaN),
        fixed(slow?.ownMs ?? Number.NaN, 1),
      ]),
    ),
    '',
  );

  if (input.paired) out.push(renderPaired(input.paired));
  else out.push('### Paired comparisons', '', input.pairedNote || 'Not run.', '');

  out.push(renderColdStarts(cold, coldTarget, sizes.coldRepeats));

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
      `fed ${sizes.memoryRequests} distinct clients keyed as the route wrapper keys them (client-ip.ts, from X-Forwarded-For), ` +
      `live heap after a full GC. It keeps at most ${LIMITER_CLIENTS.toLocaleString('en')} clients (lib/shared-state/rate-limit.ts): ` +
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
      `${sizes.memoryRequests} requests each from a new client address (the limiter counts it, then 400: no signature), live heap after a full GC: ` +
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
      `at concurrency ${CONNECTIONS}; resident memory (VmRSS) of the server process tree. ${serverSent} requests in the ${sizes.memorySeconds} s allowed ` +
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

export function renderColdStarts(cold: ColdStart[], coldTarget: number, repeats: number): string {
  const base = (pick: (entry: ColdStart) => number[]) => median(cold[0] ? pick(cold[0]) : []);
  const plainBase = base((c) => c.ms);
  const redisBase = base((c) => c.redisMs);
  const plainCpuBase = base((c) => c.cpuMs);
  const redisCpuBase = base((c) => c.redisCpuMs);
  const list = (values: number[]) => (values.length ? values.map((t) => t.toFixed(0)).join(', ') : '–');
  return [
    '### Cold start and server bundle size',
    '',
    `A fresh \`next start\` per route and repeat, from spawning the process to the answer of the route's first request (median of ${repeats}). ` +
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
      cold.map(({ route, ms, redisMs, cpuMs, redisCpuMs, bundleBytes: bytes }, index) => {
        const redis = ratio(median(redisMs), redisBase);
        return [
          route,
          list(ms),
          fixed(ratio(median(ms), plainBase)),
          fixed(ratio(median(cpuMs), plainCpuBase)),
          list(redisMs),
          fixed(redis),
          fixed(ratio(median(redisCpuMs), redisCpuBase)),
          index === 0 ? '' : verdict(redis, coldTarget),
          bytes === undefined ? '–' : (bytes / 1024).toFixed(0),
        ];
      }),
    ),
    '',
  ].join('\n');
}

export function docIntro(previous: string | undefined): string {
  const at = previous?.search(/^## Latest run\b/m) ?? -1;
  if (previous && at > 0) return previous.slice(0, at);
  return '# Benchmarks\n\nWritten by `npm run bench` (scripts/bench/).\n';
}


// ---------------------------------------------------------------- paired comparisons

const pooled = (blocks: readonly Block[]) => blocks.flatMap((b) => b.latencies);
const p50 = (blocks: readonly Block[]) => median(pooled(blocks));
const p90 = (blocks: readonly Block[]) => percentile(pooled(blocks), 90);
const cpuPerRequest = (blocks: readonly Block[]) => blocks.reduce((sum, b) => sum + b.cpuMs, 0) / pooled(blocks).length;

interface Comparison {
  flow: string;
  baseP50: number;
  p50: Difference;
  p90: Difference;
  cpu: Difference;
  commands: number;
}

/** Each flow's differences between a configuration and the base (the first configuration). */
export function compareTo(report: PairedReport, key: string): Comparison[] {
  const base = report.configurations[0]?.key as string;
  return report.flows.map((flow) => {
    const a = flow.blocks.get(base) ?? [];
    const b = flow.blocks.get(key) ?? [];
    return {
      flow: flow.flow,
      baseP50: p50(a),
      p50: pairedDifference(a, b, p50),
      p90: pairedDifference(a, b, p90),
      cpu: pairedDifference(a, b, cpuPerRequest),
      commands: flow.redisCommands.get(key) ?? Number.NaN,
    };
  });
}

/** What Redis at `roundTripMs` may add to a request's p50. */
export const redisBudgetMs = (roundTripMs: number): number => 2 * roundTripMs + TARGETS.redisSlackMs;

function redisTargetRows(report: PairedReport): string[][] {
  return report.configurations
    .filter((c) => c.delayedRoundTripMs !== undefined && c.redisRoundTripMs !== undefined)
    .map((c) => {
      const budget = redisBudgetMs(c.redisRoundTripMs as number);
      const comparisons = compareTo(report, c.key);
      let worst: Comparison | undefined;
      for (const comparison of comparisons) {
        if (!worst || comparison.p50.estimate - budget > worst.p50.estimate - budget) worst = comparison;
      }
      return [
        `Redis at ${c.delayedRoundTripMs} ms RTT (measured ${fixed(c.redisRoundTripMs as number)} ms) adds ≤ 2 × RTT + ${TARGETS.redisSlackMs} ms = ${fixed(budget, 1)} ms (p50, paired), every flow`,
        worst ? `worst +${fixed(worst.p50.estimate, 1)} ms (${worst.flow}; ${formatDifference(worst.p50)} over rounds)` : '–',
        verdict(worst?.p50.estimate ?? Number.NaN, budget),
      ];
    });
}

export function renderPaired(report: PairedReport): string {
  const [base, ...others] = report.configurations;
  if (!base) return '';
  const out: string[] = [
    '### Paired comparisons: Redis (on loopback and at a managed Redis\'s round trip) and the store over https',
    '',
    `All ${report.configurations.length} servers run at once, each warmed the same way, and every flow's requests go to them in ${report.rounds} rounds ` +
      `of one block of ${report.blockSize} sequential requests per server, the order of the servers rotating from round to round ` +
      `(each goes first, last and in between equally often, reversed every other lap), after ${report.warmup} unmeasured requests per server ` +
      'in turn: whatever the shared machine does during the run falls on all of them alike. Configurations: ' +
      report.configurations.map((c) => `**${c.key}**: ${c.label}`).join('; ') +
      `. A redis-server on loopback answers a PING in ${fixed(report.loopbackRoundTripMs, 3)} ms (median of 200); the round trip of each ` +
      'configuration is the median of 10 PINGs to its Redis after every round of every flow, so taken under the same load as the flows. Every PING ' +
      `comes ${PING_SPACING_MS} ms after the one before, as \`redis-cli --latency\` samples: a request's call meets the processes on its way idle, ` +
      'and their waking is part of its round trip (PINGs back to back read it shorter by 0.15 to 0.35 ms on this machine). The delay proxy ' +
      '(scripts/bench/delay-proxy.ts, a process of its own) adds half the round trip each way, as a managed Redis in the same region would ' +
      `(Upstash, Redis Cloud: about 1 to 2 ms from a serverless function). Each difference is to **${base.key}**, ` +
      'the estimate over all rounds and, in parentheses, the 5th to 95th percentile of the same difference over the rounds drawn again ' +
      'with replacement (1,000 draws, the same rounds for both servers): an interval that includes 0 is no difference this run could see. ' +
      'CPU is the server\'s threads\' time over each block (/proc/<pid>/task/*/schedstat, nanoseconds). Redis commands per request are ' +
      "INFO commandstats deltas of the server's own redis-server (a Lua script's commands count as well as its EVALSHA, so commands are more than round trips).",
    '',
  ];
  for (const other of others) {
    const rtt = other.redisRoundTripMs;
    const budget = other.delayedRoundTripMs !== undefined && rtt !== undefined ? redisBudgetMs(rtt) : undefined;
    out.push(
      `**${other.key}** (${other.label}) against **${base.key}**` +
        (rtt !== undefined ? `, Redis round trip ${fixed(rtt, 2)} ms measured` : '') +
        (budget !== undefined ? `; target: p50 added ≤ ${fixed(budget, 1)} ms` : '') +
        ':',
      '',
      markdownTable(
        [
          'flow',
          `p50 ms ${base.key}`,
          'added p50 ms',
          'added p90 ms',
          'added CPU ms/request',
          ...(rtt !== undefined ? ['Redis commands/request'] : []),
          ...(budget !== undefined ? ['target'] : []),
        ],
        compareTo(report, other.key).map((c) => [
          c.flow,
          fixed(c.baseP50, 1),
          formatDifference(c.p50),
          formatDifference(c.p90),
          formatDifference(c.cpu, 2),
          ...(rtt !== undefined ? [fixed(c.commands, 1)] : []),
          ...(budget !== undefined ? [verdict(c.p50.estimate, budget)] : []),
        ]),
      ),
      '',
    );
  }
  return out.join('\n');
}
