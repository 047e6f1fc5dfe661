/**
 * The Redis connection behind the shared state (docs/operations.md, "Shared state on Redis"): one client per process,
 * connected on first use. Each call is bounded by REDIS_TIMEOUT_MS and fails at once while Redis is away (bar the first
 * reconnection after a drop); every failure becomes SharedStateUnavailableError, and callers choose to fall back or fail.
 */
import { createHash, randomInt } from 'node:crypto';
import type { Config } from '@/lib/config';
import { describeFailure, RedisTimeoutError, SharedStateUnavailableError } from '@/lib/errors';
import { atMostEvery, log } from '@/lib/log';
import { orTimeout } from '@/lib/upstream/budget';
import { traceCall } from '@/lib/telemetry';

/** Longest pause between reconnection attempts: a recovered Redis is found within about two seconds. */
const MAX_RECONNECT_DELAY_MS = 2_000;
/** The client's own error events repeat on every reconnection attempt: one log line a minute is enough. */
const ERROR_LOG_INTERVAL_MS = 60_000;
/** A PING a minute keeps an idle connection open through Redis' `timeout` and load balancers (AWS 350 s, Azure 4 min). */
const PING_INTERVAL_MS = 60_000;

/**
 * Calls whose repeat is harmless when a cut leaves in doubt whether Redis applied them (lib/shared-state/request-redis.ts:
 * a lock is taken and released with its own token; a carried rate-limit hit may count twice, erring strict by one).
 * Any other call is retried only when it certainly never left.
 */
const REPEATABLE_AFTER_CUT = new Set([
  'ping',
  'script_load',
  'event_check',
  'event_record',
  'lock_acquire',
  'lock_release',
  'reconcile_cursor_read',
  'shipment_cursor_read',
  'shipped_status_read',
  'replay_parked',
  'replay_counts',
]);

const CUT_CODES = new Set(['ECONNRESET', 'EPIPE', 'ECONNABORTED', 'ETIMEDOUT']);
const TIMED_OUT = Symbol('timed out');

/** Loaded on the first connection: a process without REDIS_URL never pays its 20 MiB and 180 ms. */
let library: Promise<typeof import('redis')> | undefined;
const loadLibrary = () => (library ??= import('redis'));

function buildClient(createClient: (typeof import('redis'))['createClient'], settings: RedisConnection['settings']) {
  const tls = new URL(settings.url).protocol === 'rediss:';
  return createClient({
    url: settings.url,
    // RESP2: understood by every Redis docs/operations.md names (self-hosted 6+, Redis Cloud, Upstash).
    RESP: 2,
    // No command timeout of the client's own: runBounded's one timer bounds each call, and the order locks wait for a late answer.
    disableOfflineQueue: true,
    pingInterval: PING_INTERVAL_MS,
    socket: {
      connectTimeout: settings.timeoutMs,
      // TCP keepalive (the client's default, 30 s) for NATs; Redis' `timeout` ignores it, hence the PING.
      keepAlive: true,
      // Exponential from 50 ms, capped, with jitter so many instances do not reconnect in step.
      reconnectStrategy: (retries: number) => Math.min(50 * 2 ** Math.min(retries, 10), MAX_RECONNECT_DELAY_MS) + randomInt(0, 100),
      ...(tls ? { tls: true as const } : {}),
    },
  });
}

export type RedisClient = ReturnType<typeof buildClient>;

/**
 * Next.js loads this module twice (instrumentation.ts apart from the routes): the client lib/preload.ts starts is handed
 * to the routes' copy through this process-wide registry. Only the node-redis client crosses, never this module's classes.
 */
interface StartedClient {
  redis: RedisClient;
  connecting: Promise<void>;
  firstConnectionDeadline: number;
}

const STARTED_CLIENTS = Symbol.for('checkout-payment-service.redis-clients');

function startedClients(): Map<string, StartedClient> {
  const holder = globalThis as typeof globalThis & { [STARTED_CLIENTS]?: Map<string, StartedClient> };
  return (holder[STARTED_CLIENTS] ??= new Map());
}

/** One Redis client, connected lazily; `client()` and `run()` fail only with SharedStateUnavailableError. */
export class RedisConnection {
  private redis: RedisClient | undefined;
  private connecting: Promise<void> | undefined;
  private firstConnectionDeadline = 0;
  // Never the URL: it carries the password.
  private readonly logError = atMostEvery(ERROR_LOG_INTERVAL_MS, (error: unknown) =>
    log.warn('redis.error', { error: describeFailure(error) }),
  );
  private phase: 'connecting' | 'up' | 'reconnecting' | 'away' = 'connecting';
  /** The drop of a ready connection; `reconnected` tells whether its first reconnection succeeded. */
  private drop: { error: unknown; reconnected: Promise<boolean>; settle: (ok: boolean) => void } | undefined;
  /** In the process-wide registry (the process's own connection, getRedisConnection), or its own (a test's other instance). */
  private readonly registryKey: string | undefined;

  constructor(
    readonly settings: { url: string; timeoutMs: number },
    options: { sharedInProcess?: boolean } = {},
  ) {
    this.registryKey = options.sharedInProcess ? `${settings.url}|${settings.timeoutMs}` : undefined;
  }

  async client(): Promise<RedisClient> {
    const redis = await this.open();
    if (redis?.isReady) return redis;
    throw new SharedStateUnavailableError('connect');
  }

  private async open(): Promise<RedisClient | undefined> {
    if (this.redis?.isReady) return this.redis;
    if (!this.redis) this.adoptStartedClient();
    if (!this.redis) {
      const { createClient } = await loadLibrary().catch((error: unknown) => {
        // Like a failed connection: this request fails as shared state unavailable, and the next one tries again.
        library = undefined;
        throw new SharedStateUnavailableError('load client', error);
      });
      if (this.redis) return this.open();
      const redis = buildClient(createClient, this.settings);
      this.watch(redis);
      this.redis = redis;
      this.firstConnectionDeadline = Date.now() + this.settings.timeoutMs;
      this.connecting = redis.connect().then(
        () => undefined,
        (error: unknown) => {
          // The first connection failed for good (the strategy gave up): the next call starts afresh.
          if (this.redis === redis) this.redis = undefined;
          this.forget(redis);
          this.logError(error);
        },
      );
      if (this.registryKey) {
        startedClients().set(this.registryKey, { redis, connecting: this.connecting, firstConnectionDeadline: this.firstConnectionDeadline });
      }
    }
    const waitMs = this.firstConnectionDeadline - Date.now();
    if (this.connecting && waitMs > 0) {
      // Callers wait for the first connection until one timeout after it began; past that, nobody waits.
      await orTimeout(this.connecting, waitMs, undefined);
    }
    return this.redis;
  }

  /** A drop of a ready connection (an idle cut) makes calls wait for the first reconnection; once that fails, Redis is away. */
  private watch(redis: RedisClient, logs = true): void {
    // Without an 'error' listener an error event would crash the process.
    redis.on('error', (error: unknown) => {
      if (logs) this.logError(error);
      // The drop's own error comes again from commands it failed (a PING in flight): not a new failure.
      if (this.redis !== redis || redis.isReady || error === this.drop?.error) return;
      if (this.phase === 'up') {
        let settle: (ok: boolean) => void = () => undefined;
        const reconnected = new Promise<boolean>((resolve) => (settle = resolve));
        this.drop = { error, reconnected, settle };
        this.phase = 'reconnecting';
      } else if (this.phase === 'reconnecting') {
        this.phase = 'away';
        this.drop?.settle(false);
      }
    });
    redis.on('ready', () => {
      if (this.redis !== redis) return;
      this.phase = 'up';
      this.drop?.settle(true);
      this.drop = undefined;
    });
  }

  private async reconnected(redis: RedisClient, failure: unknown): Promise<void> {
    if (redis.isReady) return;
    if (this.phase !== 'reconnecting' || !(await this.drop?.reconnected)) throw failure;
  }

  /** Runs `operation`; every failure becomes SharedStateUnavailableError. Its span names the operation, never a key. */
  run<T>(name: string, operation: (redis: RedisClient) => Promise<T>): Promise<T> {
    return traceCall('redis', name, () => this.runBounded(name, operation));
  }

  private async runBounded<T>(name: string, operation: (redis: RedisClient) => Promise<T>): Promise<T> {
    const redis = await this.open();
    if (!redis || (!redis.isReady && this.phase !== 'reconnecting')) throw new SharedStateUnavailableError('connect');
    // The one timeout of a call, reconnection and retry included: the client has none of its own (buildClient).
    const bound = { expired: false };
    let answer: T | typeof TIMED_OUT;
    try {
      answer = await orTimeout(this.attempt(name, redis, operation, bound), this.settings.timeoutMs, TIMED_OUT);
    } catch (error) {
      throw error instanceof SharedStateUnavailableError ? error : new SharedStateUnavailableError(name, error);
    }
    if (answer !== TIMED_OUT) return answer;
    bound.expired = true;
    throw new SharedStateUnavailableError(name, new RedisTimeoutError());
  }

  /** Runs `operation`, and once more after a reconnection when a cut failed it and a repeat is safe (REPEATABLE_AFTER_CUT). */
  private async attempt<T>(name: string, redis: RedisClient, operation: (redis: RedisClient) => Promise<T>, bound: { expired: boolean }): Promise<T> {
    await this.reconnected(redis, new SharedStateUnavailableError('connect'));
    if (bound.expired) throw new SharedStateUnavailableError('connect');
    try {
      return await operation(redis);
    } catch (error) {
      const cut = await cutKind(error);
      if (cut === undefined || (cut === 'maybe_applied' && !REPEATABLE_AFTER_CUT.has(name))) throw error;
      await this.reconnected(redis, error);
      if (bound.expired) throw error;
      return await operation(redis);
    }
  }

  private adoptStartedClient(): void {
    const started = this.registryKey ? startedClients().get(this.registryKey) : undefined;
    if (!started) return;
    this.redis = started.redis;
    // Its starter logs its errors already.
    this.watch(started.redis, false);
    if (started.redis.isReady) this.phase = 'up';
    this.firstConnectionDeadline = started.firstConnectionDeadline;
    this.connecting = started.connecting.then(() => {
      // Its first connection failed for good: the starter forgot it, and so does this copy.
      if (this.registryKey && startedClients().get(this.registryKey) !== started && this.redis === started.redis) this.redis = undefined;
    });
  }

  private forget(redis: RedisClient): void {
    if (this.registryKey && startedClients().get(this.registryKey)?.redis === redis) startedClients().delete(this.registryKey);
  }

  async close(): Promise<void> {
    const redis = this.redis;
    this.redis = undefined;
    this.connecting = undefined;
    this.phase = 'connecting';
    this.drop?.settle(false);
    this.drop = undefined;
    if (!redis) return;
    this.forget(redis);
    try {
      if (redis.isOpen) redis.destroy();
    } catch {
    }
  }

}

async function cutKind(error: unknown): Promise<'unsent' | 'maybe_applied' | undefined> {
  const { ClientOfflineError, SocketClosedUnexpectedlyError } = await loadLibrary();
  if (error instanceof ClientOfflineError) return 'unsent';
  const code = (error as { code?: unknown } | undefined)?.code;
  if (error instanceof SocketClosedUnexpectedlyError || (typeof code === 'string' && CUT_CODES.has(code))) return 'maybe_applied';
  return undefined;
}

/** A Lua script run by its SHA1, sent whole (EVAL) only when Redis does not know it yet (after a restart or a failover). */
export class RedisScript {
  readonly sha: string;

  constructor(readonly source: string) {
    this.sha = createHash('sha1').update(source).digest('hex');
  }

  async run(redis: RedisClient, keys: string[], args: string[]): Promise<unknown> {
    try {
      return await redis.evalSha(this.sha, { keys, arguments: args });
    } catch (error) {
      if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT')) throw error;
      return redis.eval(this.source, { keys, arguments: args });
    }
  }
}

/** Every key's default prefix (REDIS_KEY_PREFIX), so one Redis can serve other applications too. */
export const KEY_PREFIX = 'checkout:';

let shared: RedisConnection | undefined;

/** The process's Redis connection when REDIS_URL is set, else undefined (state stays in process memory). */
export function getRedisConnection(config: Pick<Config, 'redisUrl' | 'redisTimeoutMs'>): RedisConnection | undefined {
  if (!config.redisUrl) return undefined;
  if (shared && shared.settings.url === config.redisUrl && shared.settings.timeoutMs === config.redisTimeoutMs) return shared;
  void shared?.close();
  shared = new RedisConnection({ url: config.redisUrl, timeoutMs: config.redisTimeoutMs }, { sharedInProcess: true });
  return shared;
}

export async function closeRedisConnection(): Promise<void> {
  const connection = shared;
  shared = undefined;
  await connection?.close();
}
