/**
 * Tests against a real Redis server (never a mock of one). They run when
 * REDIS_URL is set (.ci/run starts a redis-server and sets it) and are skipped
 * otherwise; tests/support/redis-global-setup.ts prints why, once per run.
 *
 * Each test takes its own key prefix, so tests running side by side on one
 * server never see each other's keys. Tests that stop, freeze or lock Redis
 * start a disposable redis-server of their own (needs the redis-server binary)
 * instead of disturbing the shared one.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { createConnection } from 'node:net';
import { afterAll } from 'vitest';
import { RedisConnection, type RedisClient } from '@/lib/redis/connection';
import { freePort } from '@/stand-ins/loopback-http';

/** Read before any test's useTestEnv() clears REDIS_URL from process.env. */
export const REDIS_URL = process.env.REDIS_URL;
export { REDIS_SKIP_REASON } from './redis-global-setup';
export const noRedis = !REDIS_URL;

const REDIS_SERVER_BIN = process.env.REDIS_SERVER_BIN ?? '/usr/bin/redis-server';
export const noRedisServerBinary = !existsSync(REDIS_SERVER_BIN);

const prefixes: string[] = [];

/** Keys of one test: `test:<name>:<random>:`, deleted from REDIS_URL's server after the file's tests. */
export function testPrefix(name: string): string {
  const prefix = `test:${name}:${randomBytes(4).toString('hex')}:`;
  prefixes.push(prefix);
  return prefix;
}

const opened: RedisConnection[] = [];
const servers: DisposableRedis[] = [];
afterAll(async () => {
  if (REDIS_URL && prefixes.length > 0) {
    const cleaner = new RedisConnection({ url: REDIS_URL, timeoutMs: 2000 });
    try {
      const redis = await cleaner.client();
      for (const prefix of prefixes.splice(0)) {
        const keys = await redis.keys(`${prefix}*`);
        if (keys.length > 0) await redis.del(keys);
      }
    } catch {
      // A server a test stopped, or one that is gone: nothing to clean.
    } finally {
      await cleaner.close();
    }
  }
  await Promise.all(opened.splice(0).map((connection) => connection.close()));
  await Promise.all(servers.splice(0).map((server) => server.stop()));
});

/** A connection of its own, like another service instance's; closed after the file's tests. */
export function redisConnection(url = REDIS_URL as string, timeoutMs = 500): RedisConnection {
  const connection = new RedisConnection({ url, timeoutMs });
  opened.push(connection);
  return connection;
}

/**
 * A connection of its own that tells when a command of one kind has been answered, so a test can wait
 * for "the other instance's lock attempt found the order held" instead of sleeping and hoping it has.
 */
export class ObservedConnection extends RedisConnection {
  private readonly waiters: { name: string; resolve: () => void }[] = [];

  override async run<T>(name: string, operation: (redis: RedisClient) => Promise<T>): Promise<T> {
    try {
      return await super.run(name, operation);
    } finally {
      for (const waiter of this.waiters.filter((w) => w.name === name)) {
        this.waiters.splice(this.waiters.indexOf(waiter), 1);
        waiter.resolve();
      }
    }
  }

  /** Resolves when the next `name` command (`lock_acquire`, …) has been answered, or has failed. */
  answered(name: string): Promise<void> {
    return new Promise((resolve) => this.waiters.push({ name, resolve }));
  }
}

/** An ObservedConnection, closed after the file's tests. */
export function observedConnection(url = REDIS_URL as string, timeoutMs = 500): ObservedConnection {
  const connection = new ObservedConnection({ url, timeoutMs });
  opened.push(connection);
  return connection;
}

/** Whether something accepts a connection on this loopback port. */
export function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

export interface DisposableRedis {
  url: string;
  port: number;
  /** Stops the server (SIGTERM) and waits until it is gone. */
  stop(): Promise<void>;
  /** Starts it again on the same port, empty. */
  restart(): Promise<void>;
  /** SIGSTOP: the server accepts nothing and answers nothing, as a hung or overloaded Redis. */
  freeze(): void;
  thaw(): void;
}

/** A redis-server of this test file's own on a free loopback port, without persistence. */
export async function startDisposableRedis(options: { password?: string; port?: number } = {}): Promise<DisposableRedis> {
  const port = options.port ?? (await freePort());
  let child: ChildProcess | undefined;

  const start = async () => {
    const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'];
    if (options.password) args.push('--requirepass', options.password);
    child = spawn(REDIS_SERVER_BIN, args, { stdio: 'ignore' });
    // A deadline, not a count of tries: a busy machine may take seconds to start a process.
    const deadline = Date.now() + 15_000;
    while (!(await listening(port))) {
      if (Date.now() > deadline) throw new Error(`redis-server did not start on port ${port}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };
  const stop = async () => {
    const running = child;
    child = undefined;
    if (!running || running.exitCode !== null) return;
    const exited = new Promise((resolve) => running.once('exit', resolve));
    running.kill('SIGCONT');
    running.kill('SIGTERM');
    await exited;
  };

  await start();
  const server: DisposableRedis = {
    url: `redis://${options.password ? `default:${options.password}@` : ''}127.0.0.1:${port}`,
    port,
    stop,
    restart: async () => {
      await stop();
      await start();
    },
    freeze: () => child?.kill('SIGSTOP'),
    thaw: () => child?.kill('SIGCONT'),
  };
  servers.push(server);
  return server;
}

/** Waits until `check` holds (a reconnecting client, say), or fails after `ms`: long enough for a busy machine. */
export async function eventually(check: () => Promise<boolean>, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Re-exported for the Redis tests; it lives with the other request helpers. */
export { awayFromWindowEdge } from './requests';

/**
 * Every command Redis receives, seen by a second client running MONITOR: what a script runs inside
 * Redis is shown as coming from `lua` and costs no trip, so it is left out. `settle` sends a marker
 * from its own connection and waits until MONITOR shows it, so every command sent before is counted.
 */
export async function monitorRedis(url: string) {
  const { createClient } = await import('redis');
  const monitor = createClient({ url, RESP: 2 });
  const marker = createClient({ url, RESP: 2 });
  await Promise.all([monitor.connect(), marker.connect()]);
  const lines: string[] = [];
  let seen: ((line: string) => void) | undefined;
  await monitor.monitor((line: string) => {
    lines.push(line);
    seen?.(line);
  });
  let markers = 0;
  const settle = async () => {
    markers += 1;
    const text = `round-trip-marker-${markers}`;
    const arrived = new Promise<void>((resolve) => {
      seen = (line) => {
        if (line.includes(text)) resolve();
      };
    });
    await marker.echo(text);
    await arrived;
  };
  return {
    /** The service's round trips while `run` ran, by command: not the scripts' inner commands, not the markers. */
    async commandsDuring(run: () => Promise<unknown>): Promise<string[]> {
      await settle();
      const from = lines.length;
      await run();
      await settle();
      const commands = lines
        .slice(from)
        .filter((line) => !line.includes(' lua]') && !line.includes('round-trip-marker'))
        .map((line) => /"([a-zA-Z]+)"/.exec(line)?.[1]?.toLowerCase() ?? line);
      // A MULTI block is sent in one write and answered in one: one trip, shown as its EXEC.
      const trips: string[] = [];
      let inBlock = false;
      for (const command of commands) {
        if (command === 'multi') inBlock = true;
        else if (command === 'exec') {
          inBlock = false;
          trips.push('exec');
        } else if (!inBlock) trips.push(command);
      }
      return trips;
    },
    async close() {
      monitor.destroy();
      marker.destroy();
    },
  };
}
