/**
 * `npm run bench -- --load`: the store shielding (STORE_MAX_CONCURRENCY) under
 * a flash sale, on loopback, in a few minutes.
 *
 * The store is the WooCommerce stand-in behind a PHP host's worker pool
 * (scripts/bench/stand-ins.ts: STORE.workers requests in service at once, the
 * rest queued in arrival order, each read or write taking its service time,
 * abandoned requests still served). Several `next start` instances share one
 * Redis; an open-loop generator (arrivals at random, as customers come, not
 * one after another) offers a mix of checkouts and webhooks at 1×, 2× and 4×
 * the store's capacity, spread over the instances as a load balancer would,
 * without the cap, with the cap at the store's worker count, and with half again as many.
 *
 * The generator behaves as the senders do: the storefront sends a checkout
 * answered 503 once more after its Retry-After (the storefront client does);
 * after the load, "Stripe" redelivers every card event not answered 200, and
 * the shipping replay cron runs until its queue is empty. Then every order is
 * audited: each payment and each shipment must be on its order exactly once.
 */
import { randomBytes } from 'node:crypto';
import { cpus } from 'node:os';
import { DEMO_SECRETS } from '@/stand-ins/demo/world';
import { cardEvent, signCardEvent } from '@/stand-ins/webhook-deliveries';
import { fixed, markdownTable, median, percentile } from './figures';
import {
  checkoutBody,
  checkoutRequest,
  intentFor,
  nextClientIp,
  shippingRequest,
  type BenchRequest,
} from './flows';
import type { ServerProcess, StandInsProcess, RedisProcess } from './world';

/**
 * A small, slow PHP host. A WooCommerce call costs 46–107 ms on a quiet host, more with heavy
 * plugins or under load, and 8–25 workers are typical; 4 workers at 160 and 240 ms keep the offered
 * load, and with it the run's own CPU (Next.js spends a few ms on any request), within what two
 * shared cores give: an overloaded load generator and service would measure themselves, not the store.
 */
export const STORE = { workers: 4, readMs: 160, writeMs: 240 };
/** Every request of the mix makes one read and one write: the store serves this many requests a second at most. */
export const CAPACITY_RPS = (STORE.workers * 1000) / (STORE.readMs + STORE.writeMs);
const LEVELS = [1, 2, 4];
/**
 * No cap; the cap at the store's worker count (the store never queues); and half again as many,
 * which lets a short queue form at the store and keeps its workers busy while the service's
 * instances are slow to turn one call around into the next (a busy machine: see the report).
 */
const CAPS = [undefined, STORE.workers, Math.round(STORE.workers * 1.5)];
const SECONDS_PER_LEVEL = 6;
const STRIPE_LATENCY_MS = 40;
/** Short enough that an overloaded store shows as timeouts within the run (the default is 10 s). */
const UPSTREAM_TIMEOUT_MS = 5_000;
/** The senders' patience (Stripe waits about this long for a webhook's answer; a browser longer). */
const CLIENT_TIMEOUT_MS = 30_000;
const BASELINE_REQUESTS = 24;
const CRON_SECRET = 'bench-load-cron-secret-0123456789';

type Kind = 'payment-intent' | 'submit-order' | 'card' | 'shipping';

/** Shares of the offered load: checkouts, then the payments and shipments that follow earlier checkouts. */
const MIX: readonly { kind: Kind; share: number }[] = [
  { kind: 'payment-intent', share: 0.4 },
  { kind: 'submit-order', share: 0.1 },
  { kind: 'card', share: 0.35 },
  { kind: 'shipping', share: 0.15 },
];

export interface LoadWorld {
  standIns: StandInsProcess;
  redis: RedisProcess;
  /** Starts `next start` with this environment (added to the service's), ready to answer. */
  startServer(name: string, env: Record<string, string>): Promise<ServerProcess>;
  serviceEnv(extra: Record<string, string>): Record<string, string>;
  progress(line: string): void;
  quick: boolean;
}

interface Sent {
  kind: Kind;
  orderId: number;
  status: number;
  ms: number;
  outcome: 'done' | 'refused' | 'failed' | 'answered';
  /** A storefront's second send after a 503. */
  retry?: boolean;
}

interface LevelResult {
  level: number;
  offeredRps: number;
  seconds: number;
  sent: Sent[];
  store: StoreStats;
  /** From the first arrival until the store was idle again, retries included. */
  windowMs: number;
}

interface StoreStats {
  served: number;
  /** Worker time spent serving calls. */
  busyMs: number;
  abandoned: number;
  maxQueue: number;
  maxBusy: number;
  waits: number[];
}

interface Facts {
  expected: number;
  once: number;
  missing: number;
  twice: number;
}

export interface ConfigurationResult {
  name: string;
  cap: number | undefined;
  baseline: Sent[];
  levels: LevelResult[];
  payments: Facts;
  shipments: Facts;
  redeliveries: number;
  redeliveryRounds: number;
  replayRuns: number;
  replayApplied: number;
}

// ---------------------------------------------------------------- the stand-ins' control API

function control(standIns: StandInsProcess) {
  const call = async <T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> => {
    const response = await fetch(`${standIns.control}${path}`, {
      method,
      ...(body === undefined ? {} : { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }),
    });
    if (!response.ok) throw new Error(`stand-in control ${method} ${path}: ${response.status}`);
    return (await response.json()) as T;
  };
  return {
    seed: async (count: number, status?: string) => (await call<{ ids: number[] }>('POST', '/seed', { count, ...(status ? { status } : {}) })).ids,
    setLatency: (ms: number) => call('POST', '/latency', { ms }),
    setWorkers: (workers: number) => call('POST', '/workers', { workers, readMs: STORE.readMs, writeMs: STORE.writeMs }),
    storeStats: () => call<StoreStats & { queued: number; busy: number }>('GET', '/store-stats'),
    audit: (ids: number[], keys: string[]) =>
      call<{ orders: { id: number; status: string; counts: Record<string, number> }[] }>('POST', '/audit', { ids, keys }),
    clearCalls: () => call('GET', '/calls'),
  };
}

// ---------------------------------------------------------------- requests

/** A seeded pseudo-random sequence, so two runs offer the same mix at the same moments. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

function pickKind(next: () => number): Kind {
  let at = next();
  for (const { kind, share } of MIX) {
    if (at < share) return kind;
    at -= share;
  }
  return 'shipping';
}

interface Planned {
  kind: Kind;
  orderId: number;
  /** Built when sent: a card event is signed then, as Stripe signs each delivery. */
  build(): Promise<BenchRequest>;
}

function cardDelivery(orderId: number, eventId: string, intent: ReturnType<typeof intentFor>): BenchRequest {
  const { payload, signature } = signCardEvent(cardEvent('payment_intent.succeeded', intent, eventId), DEMO_SECRETS.stripeWebhookSecret);
  return {
    method: 'POST',
    path: '/api/cardprovider/webhook',
    headers: { 'content-type': 'application/json', 'x-forwarded-for': nextClientIp(), 'stripe-signature': signature },
    body: payload,
  };
}

/** `count` requests of the mix, each on an order seeded for it. */
async function plan(count: number, seed: number, ctl: ReturnType<typeof control>): Promise<Planned[]> {
  const next = random(seed);
  const kinds = Array.from({ length: count }, () => pickKind(next));
  const pending = await ctl.seed(kinds.filter((kind) => kind !== 'shipping').length);
  const processing = await ctl.seed(kinds.filter((kind) => kind === 'shipping').length, 'processing');
  return kinds.map((kind) => {
    const orderId = (kind === 'shipping' ? processing.shift() : pending.shift()) as number;
    switch (kind) {
      case 'payment-intent':
      case 'submit-order': {
        const path = `/api/${kind}`;
        return { kind, orderId, build: async () => checkoutRequest(path, await checkoutBody(orderId, true)) };
      }
      case 'card': {
        const intent = intentFor(orderId, 'succeeded');
        const eventId = `evt_load_${randomBytes(10).toString('hex')}`;
        return { kind, orderId, build: async () => cardDelivery(orderId, eventId, intent) };
      }
      case 'shipping':
        return { kind, orderId, build: async () => shippingRequest(orderId) };
    }
  });
}

interface Answer {
  status: number;
  ms: number;
  body: string;
}

async function send(url: string, request: BenchRequest): Promise<Answer> {
  const started = performance.now();
  try {
    const response = await fetch(`${url}${request.path}`, {
      method: request.method,
      headers: request.headers,
      ...(request.body === undefined ? {} : { body: request.body }),
      signal: AbortSignal.timeout(CLIENT_TIMEOUT_MS),
    });
    const body = await response.text();
    return { status: response.status, ms: performance.now() - started, body };
  } catch {
    // No answer in the sender's patience, or the connection failed: 0.
    return { status: 0, ms: performance.now() - started, body: '' };
  }
}

const BUSY = 'The shop is busy, try again in a few seconds';

function outcomeOf(kind: Kind, answer: Answer): Sent['outcome'] {
  if (kind === 'shipping') return answer.status === 200 ? 'answered' : 'failed';
  if (answer.status === 200) return 'done';
  if (answer.body.includes(BUSY) && (answer.status === 503 || answer.status === 400)) return 'refused';
  return 'failed';
}

function retryAfterOf(answer: Answer): number | undefined {
  try {
    const seconds = (JSON.parse(answer.body) as { error?: { retry_after_seconds?: unknown } }).error?.retry_after_seconds;
    return typeof seconds === 'number' && seconds <= 5 ? seconds : undefined;
  } catch {
    return undefined;
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

// ---------------------------------------------------------------- one configuration

async function waitForIdleStore(ctl: ReturnType<typeof control>, progress: (line: string) => void): Promise<StoreStats> {
  const merged: StoreStats = { served: 0, busyMs: 0, abandoned: 0, maxQueue: 0, maxBusy: 0, waits: [] };
  const deadline = performance.now() + 180_000;
  for (;;) {
    const stats = await ctl.storeStats();
    merged.served += stats.served;
    merged.busyMs += stats.busyMs;
    merged.abandoned += stats.abandoned;
    merged.maxQueue = Math.max(merged.maxQueue, stats.maxQueue);
    merged.maxBusy = Math.max(merged.maxBusy, stats.maxBusy);
    merged.waits.push(...stats.waits);
    if (stats.queued === 0 && stats.busy === 0) return merged;
    if (performance.now() > deadline) {
      progress(`  the store still had ${stats.queued} calls queued after 3 minutes; going on`);
      return merged;
    }
    await sleep(250);
  }
}

async function runConfiguration(world: LoadWorld, name: string, cap: number | undefined, seedBase: number): Promise<ConfigurationResult> {
  const { progress } = world;
  const ctl = control(world.standIns);
  const instances = world.quick ? 2 : 3;
  const env = world.serviceEnv({
    REDIS_URL: world.redis.url,
    REDIS_KEY_PREFIX: `bench-load-${name}:`,
    UPSTREAM_TIMEOUT_MS: String(UPSTREAM_TIMEOUT_MS),
    CRON_SECRET,
    ...(cap === undefined ? {} : { STORE_MAX_CONCURRENCY: String(cap) }),
  });
  const servers: ServerProcess[] = [];
  try {
    for (let i = 0; i < instances; i += 1) servers.push(await world.startServer(`load-${name}-${i}`, env));
    let turn = 0;
    const nextServer = () => (servers[turn++ % servers.length] as ServerProcess).url;
    const result: ConfigurationResult = {
      name,
      cap,
      baseline: [],
      levels: [],
      payments: { expected: 0, once: 0, missing: 0, twice: 0 },
      shipments: { expected: 0, once: 0, missing: 0, twice: 0 },
      redeliveries: 0,
      redeliveryRounds: 0,
      replayRuns: 0,
      replayApplied: 0,
    };
    const cardOrders: { orderId: number; build: () => Promise<BenchRequest>; done: boolean }[] = [];
    const shippingOrders: number[] = [];

    // Warm each instance (modules, JIT, connections) on the idle store, then the unloaded baseline, one at a time.
    for (const server of servers) {
      for (const planned of await plan(8, seedBase, ctl)) await send(server.url, await planned.build());
    }
    await waitForIdleStore(ctl, progress);
    for (const planned of await plan(BASELINE_REQUESTS, seedBase + 1, ctl)) {
      const answer = await send(nextServer(), await planned.build());
      result.baseline.push({ kind: planned.kind, orderId: planned.orderId, status: answer.status, ms: answer.ms, outcome: outcomeOf(planned.kind, answer) });
    }
    await waitForIdleStore(ctl, progress);

    for (const level of LEVELS) {
      const rate = level * CAPACITY_RPS;
      const seconds = world.quick ? 3 : SECONDS_PER_LEVEL;
      const planned = await plan(Math.round(rate * seconds), seedBase + 10 + level, ctl);
      const sent: Sent[] = [];
      const inFlight: Promise<void>[] = [];
      const arrivals = random(seedBase + 100 + level);
      const started = performance.now();
      let at = 0;
      for (const request of planned) {
        // Poisson arrivals: exponential gaps of mean 1/rate.
        at += -Math.log(1 - arrivals()) / rate;
        const wait = started + at * 1000 - performance.now();
        if (wait > 1) await sleep(wait);
        inFlight.push(
          (async () => {
            const built = await request.build();
            const answer = await send(nextServer(), built);
            const outcome = outcomeOf(request.kind, answer);
            sent.push({ kind: request.kind, orderId: request.orderId, status: answer.status, ms: answer.ms, outcome });
            const retryAfter = request.kind === 'payment-intent' || request.kind === 'submit-order' ? retryAfterOf(answer) : undefined;
            if (outcome === 'refused' && retryAfter !== undefined) {
              // The storefront client's one retry after a short Retry-After.
              await sleep(retryAfter * 1000);
              const again = await send(nextServer(), await request.build());
              sent.push({ kind: request.kind, orderId: request.orderId, status: again.status, ms: again.ms, outcome: outcomeOf(request.kind, again), retry: true });
            }
          })(),
        );
        if (request.kind === 'card') cardOrders.push({ orderId: request.orderId, build: request.build, done: false });
        if (request.kind === 'shipping') shippingOrders.push(request.orderId);
      }
      await Promise.all(inFlight);
      const store = await waitForIdleStore(ctl, progress);
      const windowMs = performance.now() - started;
      for (const card of cardOrders) {
        if (sent.some((s) => s.kind === 'card' && s.orderId === card.orderId && s.outcome === 'done')) card.done = true;
      }
      result.levels.push({ level, offeredRps: rate, seconds, sent, store, windowMs });
      const first = sent.filter((s) => !s.retry);
      const count = (outcome: Sent['outcome']) => first.filter((s) => s.outcome === outcome).length;
      progress(
        `  ${name}, ${level}× (${fixed(rate, 0)} req/s for ${seconds} s): ${first.length} sent, ${count('done')} done, ` +
          `${count('refused')} refused, ${count('failed')} failed; the store served ${store.served} calls ` +
          `(busy ${fixed((100 * store.busyMs) / (STORE.workers * windowMs), 0)} % of ${fixed(windowMs / 1000, 1)} s), queue up to ${store.maxQueue}, ` +
          `p99 wait at the store ${fixed(percentile(store.waits, 99), 0)} ms`,
      );
    }

    // Stripe redelivers what was not answered 200 (compressed: hours become seconds), one at a time.
    for (let round = 0; round < 10 && cardOrders.some((card) => !card.done); round += 1) {
      result.redeliveryRounds = round + 1;
      for (const card of cardOrders.filter((c) => !c.done)) {
        result.redeliveries += 1;
        const answer = await send(nextServer(), await card.build());
        if (answer.status === 200) card.done = true;
      }
    }
    // The shipping replay cron, run until its queue is empty.
    for (let run = 0; run < 10; run += 1) {
      const answer = await send(nextServer(), { method: 'GET', path: '/api/cron/retry-shipping', headers: { authorization: `Bearer ${CRON_SECRET}` } });
      result.replayRuns = run + 1;
      const summary = JSON.parse(answer.body || '{}') as { applied?: number; waiting?: number; parkedTotal?: number };
      result.replayApplied += summary.applied ?? 0;
      if (answer.status === 200 && summary.waiting === 0) break;
    }

    result.payments = await audit(ctl, cardOrders.map((c) => c.orderId), '_provider_payment_intent_id', 'processing');
    result.shipments = await audit(ctl, shippingOrders, '_tracking_number', 'shipped');
    progress(
      `  ${name}: payments ${result.payments.once}/${result.payments.expected} applied once (${result.payments.twice} twice, ${result.payments.missing} missing) ` +
        `after ${result.redeliveries} redeliveries; shipments ${result.shipments.once}/${result.shipments.expected} once ` +
        `(${result.shipments.twice} twice, ${result.shipments.missing} missing) after ${result.replayRuns} replay runs`,
    );
    return result;
  } finally {
    for (const server of servers) await server.close().catch(() => undefined);
  }
}

async function audit(ctl: ReturnType<typeof control>, ids: number[], key: string, status: string): Promise<Facts> {
  const facts: Facts = { expected: ids.length, once: 0, missing: 0, twice: 0 };
  for (let i = 0; i < ids.length; i += 200) {
    for (const order of (await ctl.audit(ids.slice(i, i + 200), [key])).orders) {
      const count = order.counts[key] ?? 0;
      if (count > 1) facts.twice += 1;
      else if (count === 1 && order.status === status) facts.once += 1;
      else facts.missing += 1;
    }
  }
  return facts;
}

// ---------------------------------------------------------------- the run

export async function loadRun(world: LoadWorld): Promise<ConfigurationResult[]> {
  const ctl = control(world.standIns);
  await ctl.setLatency(STRIPE_LATENCY_MS);
  await ctl.setWorkers(STORE.workers);
  world.progress(
    `load: store of ${STORE.workers} workers (reads ${STORE.readMs} ms, writes ${STORE.writeMs} ms: ${fixed(CAPACITY_RPS, 0)} requests/s), ` +
      `${world.quick ? 2 : 3} instances, ${cpus().length} cores`,
  );
  try {
    const results: ConfigurationResult[] = [];
    for (const [index, cap] of CAPS.entries()) {
      results.push(await runConfiguration(world, cap === undefined ? 'no-cap' : `cap-${cap}`, cap, 1000 * (index + 1)));
      await ctl.clearCalls();
    }
    return results;
  } finally {
    await ctl.setWorkers(0).catch(() => undefined);
    await ctl.setLatency(0).catch(() => undefined);
  }
}

// ---------------------------------------------------------------- the report

const firstSends = (sent: Sent[]) => sent.filter((s) => !s.retry);
const msOf = (sent: Sent[], outcome: Sent['outcome']) => sent.filter((s) => s.outcome === outcome).map((s) => s.ms);

export function renderLoadReport(results: ConfigurationResult[], meta: { date: string; commit: string; machine: string; duration: string; quick: boolean }): string {
  const out: string[] = [];
  out.push(
    '## Load test: the store at a flash sale',
    '',
    `Written by \`npm run bench -- --load\` (scripts/bench/load.ts) on ${meta.date}, commit ${meta.commit}, ${meta.machine}, in ${meta.duration}` +
      `${meta.quick ? ' (quick: short levels, the figures only show the harness works)' : ''}.`,
    '',
    `The store: the WooCommerce stand-in behind a PHP host of ${STORE.workers} workers (a read takes ${STORE.readMs} ms, a write ${STORE.writeMs} ms; ` +
      `the rest wait in arrival order, and a call whose client gave up is still served), so it serves at most ${fixed(CAPACITY_RPS, 0)} requests a second ` +
      `of the mix (each makes one read and one write). Stripe answers after ${STRIPE_LATENCY_MS} ms. ` +
      `Instances: ${meta.quick ? 2 : 3} \`next start\` sharing one Redis, requests spread in turn; ` +
      `UPSTREAM_TIMEOUT_MS ${UPSTREAM_TIMEOUT_MS}. Offered load: Poisson arrivals at 1×, 2× and 4× the store's capacity, ` +
      `${MIX.map((m) => `${Math.round(m.share * 100)} % ${m.kind}`).join(', ')}, each on an order of its own. ` +
      'A checkout answered 503 is sent once more after its Retry-After, as the storefront client does; ' +
      'after the load, every card event not answered 200 is redelivered (Stripe, its hours compressed into seconds) and the shipping replay runs until its queue is empty.',
    '',
    '"Done" counts checkouts and card events answered 200 (a shipping delivery is answered 200 whether applied or queued, so it is left out of done and refused); ' +
      '"refused" the busy answers (checkout 503, card webhook 400 "the shop is busy"); "failed" everything else (timeouts, other 5xx and 400s, no answer in 30 s). ' +
      'Latencies are from the first send of each request; the wait at the store is from a call\'s arrival at the PHP host to a worker taking it; ' +
      '"store busy" is the worker time used over the level\'s window, from its first arrival until the store was idle again (the drain and the retries included). ' +
      `Three configurations: no cap, STORE_MAX_CONCURRENCY at the store's ${STORE.workers} workers (the store never queues), and at ${CAPS[2]} ` +
      '(a queue of two at most: it keeps the workers busy while the instances are slow to turn one call into the next).',
    '',
  );
  out.push(
    markdownTable(
      ['cap', 'unloaded p50 ms', 'unloaded p99 ms'],
      results.map((r) => {
        const done = msOf(r.baseline, 'done');
        return [r.cap === undefined ? 'none' : String(r.cap), fixed(median(done), 0), fixed(percentile(done, 99), 0)];
      }),
    ),
    '',
  );
  out.push(
    markdownTable(
      [
        'cap',
        'load',
        'requests',
        'done',
        'refused',
        'failed',
        'done p50 ms',
        'done p99 ms',
        'done p99 × unloaded',
        'refused p50 ms',
        'refused p99 ms',
        'store busy',
        'store queue max',
        'store wait p99 ms',
        'calls served after their client left',
        'retried checkouts done',
      ],
      results.flatMap((r) => {
        const unloadedP99 = percentile(msOf(r.baseline, 'done'), 99);
        return r.levels.map((level) => {
          const first = firstSends(level.sent);
          const done = msOf(first, 'done');
          const refused = msOf(first, 'refused');
          const retries = level.sent.filter((s) => s.retry);
          return [
            r.cap === undefined ? 'none' : String(r.cap),
            `${level.level}× (${fixed(level.offeredRps, 0)}/s)`,
            String(first.length),
            String(done.length),
            String(refused.length),
            String(first.filter((s) => s.outcome === 'failed').length),
            fixed(median(done), 0),
            fixed(percentile(done, 99), 0),
            fixed(percentile(done, 99) / unloadedP99),
            fixed(median(refused), 0),
            fixed(percentile(refused, 99), 0),
            `${fixed((100 * level.store.busyMs) / (STORE.workers * level.windowMs), 0)} %`,
            String(level.store.maxQueue),
            fixed(percentile(level.store.waits, 99), 0),
            String(level.store.abandoned),
            retries.length ? `${retries.filter((s) => s.outcome === 'done').length} of ${retries.length}` : '–',
          ];
        });
      }),
    ),
    '',
  );
  out.push(
    'Every fact applied exactly once in the end (each card payment as one `_provider_payment_intent_id` entry on a `processing` order, ' +
      'each shipment as one `_tracking_number` entry on a `shipped` one):',
    '',
    markdownTable(
      ['cap', 'payments', 'applied once', 'twice', 'missing', 'redeliveries (rounds)', 'shipments', 'applied once', 'twice', 'missing', 'replay runs (applied)'],
      results.map((r) => [
        r.cap === undefined ? 'none' : String(r.cap),
        String(r.payments.expected),
        String(r.payments.once),
        String(r.payments.twice),
        String(r.payments.missing),
        `${r.redeliveries} (${r.redeliveryRounds})`,
        String(r.shipments.expected),
        String(r.shipments.once),
        String(r.shipments.twice),
        String(r.shipments.missing),
        `${r.replayRuns} (${r.replayApplied})`,
      ]),
    ),
  );
  return out.join('\n');
}
