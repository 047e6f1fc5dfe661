/**
 * The processes a bench run starts, each on its own: the stand-ins
 * (scripts/bench/stand-ins.ts), `next start` on the production build, and
 * `redis-server`. Everything listens on 127.0.0.1 only and is stopped by the
 * run, even when it fails.
 */
import { execFile, spawn, spawnSync } from 'node:child_process';
import { closeSync, mkdirSync, openSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { connect } from 'node:net';
import { createInterface } from 'node:readline';
import { promisify } from 'node:util';
import { buildIsCurrent as isBuildCurrent, environmentWithoutServiceVariables, stopGroup } from '@/scripts/service-process';
import { freePort, LOOPBACK } from '@/stand-ins/loopback-http';
import { median, parseCommandStats } from './figures';
import type { BenchStandInUrls } from './contract';

const run = promisify(execFile);
export const ROOT = process.cwd();
export const ARTIFACTS = join(ROOT, 'test-artifacts', 'bench');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));


// ---------------------------------------------------------------- the build

/** The same freshness check as the e2e setup: BUILD_ID newer than every source. */
export const buildIsCurrent = (): boolean => isBuildCurrent(ROOT);

/** Next.js's command line, as installed in `root`'s node_modules. */
export const nextBin = (root = ROOT) => createRequire(join(root, 'package.json')).resolve('next/dist/bin/next');

export function buildApp(log: (line: string) => void): void {
  if (buildIsCurrent()) {
    log('build: .next is current, not rebuilding');
    return;
  }
  log('build: running `next build` (one to three minutes) ...');
  const started = Date.now();
  const result = spawnSync(process.execPath, [nextBin(), 'build'], {
    cwd: ROOT,
    env: { ...process.env, NODE_ENV: 'production', NEXT_TELEMETRY_DISABLED: '1' },
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  if (result.status !== 0) {
    throw new Error(`next build failed (exit ${result.status}):\n${`${result.stdout}${result.stderr}`.slice(-4000)}`);
  }
  log(`build: done in ${Math.round((Date.now() - started) / 1000)} s`);
}

// ---------------------------------------------------------------- stand-ins

export interface StandInsProcess extends BenchStandInUrls {
  pid: number;
  close(): Promise<void>;
}

export async function startStandIns(tls?: { cert: string; key: string }): Promise<StandInsProcess> {
  const tsx = join(ROOT, 'node_modules', '.bin', 'tsx');
  const args = [join(ROOT, 'scripts', 'bench', 'stand-ins.ts'), ...(tls ? ['--tls-cert', tls.cert, '--tls-key', tls.key] : [])];
  const child = spawn(tsx, args, { cwd: ROOT, stdio: ['pipe', 'pipe', 'inherit'], detached: true });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  const first = await Promise.race([
    new Promise<string>((resolve) => lines.once('line', resolve)),
    exited.then(() => {
      throw new Error('the bench stand-ins exited before printing their URLs');
    }),
  ]);
  const urls = JSON.parse(first) as BenchStandInUrls;
  return { ...urls, pid: child.pid as number, close: () => stopGroup(child, exited) };
}

// ---------------------------------------------------------------- next start

export interface ServerProcess {
  url: string;
  pid: number;
  /** performance.now() when the process was spawned. */
  spawnedAt: number;
  close(): Promise<void>;
}

/**
 * Spawns `next start` in its own process group and returns at once; `ready`
 * says when a request answered. The server's output goes to test-artifacts/bench/<name>.log.
 * `root` is the tree whose build it serves (another than this one for `--against`).
 */
export async function spawnServer(name: string, env: Record<string, string>, nodeArgs: string[] = [], root = ROOT): Promise<ServerProcess> {
  const port = await freePort();
  mkdirSync(ARTIFACTS, { recursive: true });
  const logFd = openSync(join(ARTIFACTS, `${name}.log`), 'w');
  const inherited = environmentWithoutServiceVariables();
  const spawnedAt = performance.now();
  const child = spawn(process.execPath, [...nodeArgs, nextBin(root), 'start', '--port', String(port), '--hostname', LOOPBACK], {
    cwd: root,
    env: { ...inherited, ...env, NODE_ENV: 'production', NEXT_TELEMETRY_DISABLED: '1' },
    stdio: ['ignore', logFd, logFd],
    detached: true,
  });
  closeSync(logFd);
  const exited = new Promise((resolve) => child.once('exit', resolve));
  return { url: `http://${LOOPBACK}:${port}`, pid: child.pid as number, spawnedAt, close: () => stopGroup(child, exited) };
}

/** Polls `probe` until it answers (any HTTP status); the time of that first answer. */
export async function firstAnswer(probe: () => Promise<Response>, timeoutMs = 60_000): Promise<number> {
  const deadline = performance.now() + timeoutMs;
  while (performance.now() < deadline) {
    try {
      const response = await probe();
      await response.arrayBuffer();
      return performance.now();
    } catch {
      await sleep(10);
    }
  }
  throw new Error('the server did not answer in time');
}

// ---------------------------------------------------------------- redis

export interface RedisProcess {
  url: string;
  port: number;
  /** Commands the server has run so far, by command, from INFO commandstats. */
  commandCounts(): Promise<Map<string, number>>;
  close(): Promise<void>;
}

export const REDIS_SERVER = process.env.REDIS_SERVER_BIN ?? '/usr/bin/redis-server';

/** A throw-away redis-server on a free loopback port, without persistence. */
export async function startRedis(): Promise<RedisProcess> {
  const port = await freePort();
  const child = spawn(REDIS_SERVER, ['--port', String(port), '--bind', LOOPBACK, '--save', '', '--appendonly', 'no'], {
    stdio: 'ignore',
    detached: true,
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const cli = (...args: string[]) => run('redis-cli', ['-h', LOOPBACK, '-p', String(port), ...args], { encoding: 'utf8' });
  for (let i = 0; ; i += 1) {
    try {
      if ((await cli('PING')).stdout.trim() === 'PONG') break;
    } catch {
      if (i > 100) throw new Error('redis-server did not start');
    }
    await sleep(50);
  }
  return {
    url: `redis://${LOOPBACK}:${port}`,
    port,
    commandCounts: async () => parseCommandStats((await cli('INFO', 'commandstats')).stdout),
    close: () => stopGroup(child, exited),
  };
}

// ---------------------------------------------------------------- TLS

/** A self-signed certificate for 127.0.0.1, made now with openssl. */
export async function makeCertificate(dir: string): Promise<{ cert: string; key: string }> {
  mkdirSync(dir, { recursive: true });
  const cert = join(dir, 'store-cert.pem');
  const key = join(dir, 'store-key.pem');
  await run('openssl', [
    'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1',
    '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1',
    '-keyout', key, '-out', cert,
  ]);
  return { cert, key };
}

// ---------------------------------------------------------------- a managed Redis, imitated

export interface DelayProxyProcess {
  /** The listening port of each requested pair, in order. */
  ports: number[];
  pid: number;
  close(): Promise<void>;
}

/**
 * scripts/bench/delay-proxy.ts in its own process: one listener per
 * `{ targetPort, roundTripMs }`, each adding half the round trip each way.
 */
export async function startDelayProxy(pairs: { targetPort: number; roundTripMs: number }[]): Promise<DelayProxyProcess> {
  const tsx = join(ROOT, 'node_modules', '.bin', 'tsx');
  const args = [join(ROOT, 'scripts', 'bench', 'delay-proxy.ts'), ...pairs.flatMap((p) => [String(p.targetPort), String(p.roundTripMs)])];
  const child = spawn(tsx, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'], detached: true });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  const first = await Promise.race([
    new Promise<string>((resolve) => lines.once('line', resolve)),
    exited.then(() => {
      throw new Error('the delay proxy exited before printing its ports');
    }),
  ]);
  return { ports: JSON.parse(first) as number[], pid: child.pid as number, close: () => stopGroup(child, exited) };
}

/**
 * A PING every 10 ms, as `redis-cli --latency` samples a Redis: a request's
 * Redis call comes after its process, the proxy and redis-server have been
 * idle, and waking each of them is part of the round trip it meets (on this
 * machine 0.2 ms on loopback, 0.04 ms back to back). PINGs sent back to back
 * find every process awake and read the round trip short.
 */
export const PING_SPACING_MS = 10;

/** The median round trip of `count` PINGs, one every PING_SPACING_MS on one connection, to a Redis (or a proxy in front of it). */
export async function redisRoundTripMs(port: number, count = 200): Promise<number> {
  return median(await redisRoundTrips(port, count));
}

/** The round trips of `count` PINGs on one connection, one every PING_SPACING_MS. */
export async function redisRoundTrips(port: number, count: number): Promise<number[]> {
  const socket = connect(port, LOOPBACK);
  socket.setNoDelay(true);
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  const times: number[] = [];
  try {
    for (let i = 0; i < count; i += 1) {
      await sleep(PING_SPACING_MS);
      const started = performance.now();
      await new Promise<void>((resolve, reject) => {
        let got = '';
        const onData = (chunk: Buffer) => {
          got += chunk.toString('latin1');
          if (got.includes('\r\n')) {
            socket.off('data', onData);
            if (got.startsWith('+PONG')) resolve();
            else reject(new Error(`PING answered ${JSON.stringify(got)}`));
          }
        };
        socket.on('data', onData);
        socket.write('PING\r\n');
      });
      times.push(performance.now() - started);
    }
  } finally {
    socket.destroy();
  }
  return times;
}
