/**
 * The Redis connection behind the shared state (docs/operations.md, "Shared state on
 * Redis"): one client per process, connected on first use and reused by every
 * request, never a connection per request.
 *
 * Every call is short: the connect and each command time out after
 * REDIS_TIMEOUT_MS (500 ms by default), and while the client is disconnected
 * commands fail at once instead of queueing, so a Redis outage costs a request
 * at most one timeout. Any failure (refused, slow, wrong password, dropped)
 * becomes a SharedStateUnavailableError; callers decide whether to fall back
 * (checkout, shipping) or to fail (the card webhook). The client reconnects
 * by itself, with a capped, jittered backoff.
 *
 * Other modules that need Redis (a replay queue, say) take the same
 * connection with `getRedisConnection(config)`.
 */
import { createHash, randomInt } from 'node:crypto';
import type { Config } from '@/lib/config';
import { describeFailure, RedisTimeoutError, SharedStateUnavailableError } from '@/lib/errors';
import { log } from '@/lib/log';
import { traceCall } from '@/lib/telemetry';

export interface RedisSettings {
  url: string;
  /** Connect timeout and per-command timeout, in milliseconds. */
  timeoutMs: number;
}

/** Longest pause between reconnection attempts: a recovered Redis is found within about two seconds. */
const MAX_RECONNECT_DELAY_MS = 2_000;
/** The client's own error events repeat on every reconnection attempt: one log line a minute is enough. */
const ERROR_LOG_INTERVAL_MS = 60_000;

/**
 * The Redis client library, loaded on the first connection: a process without
 * REDIS_URL never loads it, and no route's bundle carries it (it costs about
 * 20 MiB and 180 ms of loading, and 500 kB in every route's chunks).
 */
let library: Promise<typeof import('redis')> | undefined;
const loadLibrary = () => (library ??= import('redis'));

function buildClient(createClient: (typeof import('redis'))['createClient'], settings: RedisSettings) {
  const tls = new URL(settings.url).protocol === 'rediss:';
  return createClient({
    url: settings.url,
    // RESP2: understood by every Redis docs/operations.md names (self-hosted 6+, Redis Cloud, Upstash).
    RESP: 2,
    // No command timeout of the client's own: runBounded's one timer bounds each call (a
    // client timeout would also reject a command Redis may still apply, whose late answer
    // the order locks wait for). With the offline queue off, nothing waits to be written.
    disableOfflineQueue: true,
    socket: {
      connectTimeout: settings.timeoutMs,
      // Exponential from 50 ms, capped, with jitter so many instances do not reconnect in step.
      reconnectStrategy: (retries: number) => Math.min(50 * 2 ** Math.min(retries, 10), MAX_RECONNECT_DELAY_MS) + randomInt(0, 100),
      ...(tls ? { tls: true as const } : {}),
    },
  });
}

export type RedisClient = ReturnType<typeof buildClient>;

/** An error as a log-safe identifier: its name and code, never its message (which may quote a host or a reply). */

/**
 * Next.js evaluates instrumentation.ts's imports apart from the routes' (two
 * copies of this module in one process): the client that lib/preload.ts starts
 * when the instance starts is handed to the routes' copy through this
 * process-wide registry, so the process keeps one connection and its first
 * request finds it connected. Only the node-redis client crosses over, never
 * this module's own classes (each copy has its own error classes, and callers
 * tell failures apart with `instanceof`).
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

/**
 * One Redis client, connected lazily. `client()` answers a ready client or
 * throws SharedStateUnavailableError within the timeout; `run()` does the same
 * for a whole operation, so every Redis failure surfaces as that one error.
 */
export class RedisConnection {
  private redis: RedisClient | undefined;
  private connecting: Promise<void> | undefined;
  private firstConnectionDeadline = 0;
  private lastErrorLog = Number.NEGATIVE_INFINITY;
  /** In the process-wide registry (the process's own connection, getRedisConnection), or its own (a test's other instance). */
  private readonly registryKey: string | undefined;

  constructor(
    readonly settings: RedisSettings,
    options: { sharedInProcess?: boolean } = {},
  ) {
    this.registryKey = options.sharedInProcess ? `${settings.url}|${settings.timeoutMs}` : undefined;
  }

  async client(): Promise<RedisClient> {
    if (this.redis?.isReady) return this.redis;
    if (!this.redis) this.adoptStartedClient();
    if (!this.redis) {
      let createClient: (typeof import('redis'))['createClient'];
      try {
        ({ createClient } = await loadLibrary());
      } catch (error) {
        // Like a failed connection: this request fails as shared state unavailable, and the next one tries again.
        library = undefined;
        throw new SharedStateUnavailableError('load client', error);
      }
      // Another call may have started the connection while the library loaded.
      if (this.redis) return this.client();
      const redis = buildClient(createClient, this.settings);
      // Without a listener an 'error' event would crash the process.
      redis.on('error', (error: unknown) => this.logError(error));
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
      // The first connection: callers wait for it until one timeout after it began. Past
      // that, nobody waits: while Redis is away every call fails at once, and the client
      // keeps reconnecting in the background.
      let timer: NodeJS.Timeout | undefined;
      const timedOut = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, waitMs);
      });
      await Promise.race([this.connecting, timedOut]);
      clearTimeout(timer);
    }
    if (this.redis?.isReady) return this.redis;
    throw new SharedStateUnavailableError('connect');
  }

  /**
   * Runs `operation` with the client; every failure, whatever its kind, becomes SharedStateUnavailableError.
   * With tracing on, each run is a `redis <name>` span with its outcome; the span names the
   * operation only, never a key (keys hold order ids and client IPs).
   */
  run<T>(name: string, operation: (redis: RedisClient) => Promise<T>): Promise<T> {
    return traceCall('redis', name, () => this.runBounded(name, operation));
  }

  private async runBounded<T>(name: string, operation: (redis: RedisClient) => Promise<T>): Promise<T> {
    const redis = await this.client();
    // The one timeout of a call: the client has none of its own (buildClient).
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new SharedStateUnavailableError(name, new RedisTimeoutError())), this.settings.timeoutMs);
    });
    try {
      return await Promise.race([operation(redis), deadline]);
    } catch (error) {
      if (error instanceof SharedStateUnavailableError) throw error;
      throw new SharedStateUnavailableError(name, error);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Takes the client another copy of this module started for this process, if any (see StartedClient). */
  private adoptStartedClient(): void {
    const started = this.registryKey ? startedClients().get(this.registryKey) : undefined;
    if (!started) return;
    this.redis = started.redis;
    this.firstConnectionDeadline = started.firstConnectionDeadline;
    this.connecting = started.connecting.then(() => {
      // Its first connection failed for good: the starter forgot it, and so does this copy.
      if (this.registryKey && startedClients().get(this.registryKey) !== started && this.redis === started.redis) this.redis = undefined;
    });
  }

  private forget(redis: RedisClient): void {
    if (this.registryKey && startedClients().get(this.registryKey)?.redis === redis) startedClients().delete(this.registryKey);
  }

  /** Closes the client (tests, shutdown). A later call connects again. */
  async close(): Promise<void> {
    const redis = this.redis;
    this.redis = undefined;
    this.connecting = undefined;
    if (!redis) return;
    this.forget(redis);
    try {
      if (redis.isOpen) redis.destroy();
    } catch {
      // already closed
    }
  }

  private logError(error: unknown): void {
    const now = Date.now();
    if (now - this.lastErrorLog < ERROR_LOG_INTERVAL_MS) return;
    this.lastErrorLog = now;
    // Never the URL: it carries the password.
    log.warn('redis.error', { error: describeFailure(error) });
  }
}

/**
 * Runs a Lua script by its SHA1 (EVALSHA: the script's text is not resent on
 * every call), loading it with EVAL only when Redis does not know it yet (after
 * a restart or a failover): one round trip normally, two the first time.
 */
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

/** Where every key of this service starts by default (REDIS_KEY_PREFIX), so one Redis can serve other applications too. */
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

/** Closes the process's connection (tests, and resetServices). */
export async function closeRedisConnection(): Promise<void> {
  const connection = shared;
  shared = undefined;
  await connection?.close();
}
