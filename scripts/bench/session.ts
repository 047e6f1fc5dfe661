/**
 * What every mode of the bench shares (scripts/bench/run.ts and load.ts): the
 * progress log, the processes a run started and stops on the way out, sending
 * a prepared request, the stand-ins' control API, and the lines that say on
 * which commit and how busy a machine a run was made.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { cpus } from 'node:os';
import type { BenchRequest } from './flows';
import { ROOT } from './world';

const runStarted = performance.now();

/** One line of the run's log, with the seconds since it started. */
export const progress = (line: string): void =>
  console.log(`[bench ${((performance.now() - runStarted) / 1000).toFixed(0).padStart(3)} s] ${line}`);

export const secondsSinceStart = (): number => (performance.now() - runStarted) / 1000;

/** Everything started and not yet stopped, newest last: stopped on the way out, even on Ctrl-C. */
const opened: { close(): Promise<void> }[] = [];

/** Registers a process (or anything with `close`) to stop when the run ends; returns it. */
export function keep<T extends { close(): Promise<void> }>(thing: T): T {
  opened.push(thing);
  return thing;
}

export async function closeAll(): Promise<void> {
  while (opened.length > 0) await opened.pop()?.close().catch(() => undefined);
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    console.error(`[bench] ${signal}: stopping the processes it started`);
    void closeAll().finally(() => process.exit(130));
  });
}

export interface Answer {
  /** 0 when no answer came (connection failed, or the time limit passed). */
  status: number;
  ms: number;
  body: string;
}

/** Sends one prepared request and reads its whole answer. */
export async function sendRequest(serverUrl: string, request: BenchRequest, timeoutMs?: number): Promise<Answer> {
  const started = performance.now();
  try {
    const response = await fetch(`${serverUrl}${request.path}`, {
      method: request.method,
      headers: request.headers,
      ...(request.body === undefined ? {} : { body: request.body }),
      ...(timeoutMs === undefined ? {} : { signal: AbortSignal.timeout(timeoutMs) }),
    });
    const body = await response.text();
    return { status: response.status, ms: performance.now() - started, body };
  } catch (error) {
    if (timeoutMs === undefined) throw error;
    return { status: 0, ms: performance.now() - started, body: '' };
  }
}

/** A call to the stand-ins' loopback control API (scripts/bench/stand-ins.ts), its JSON answer. */
export function controlApi(controlUrl: string) {
  return async <T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> => {
    const response = await fetch(`${controlUrl}${path}`, {
      method,
      ...(body === undefined ? {} : { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }),
    });
    if (!response.ok) throw new Error(`stand-in control ${method} ${path}: ${response.status}`);
    return (await response.json()) as T;
  };
}

export function commitOf(): string {
  try {
    const head = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--', 'app', 'lib', 'scripts', 'stand-ins'], { cwd: ROOT, encoding: 'utf8' }).trim();
    return dirty ? `${head} (app/, lib/ or scripts/ modified)` : head;
  } catch {
    return 'unknown';
  }
}

export function loadAverage(): string {
  try {
    return readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
  } catch {
    return 'unknown';
  }
}

/** The load average when the run started: what the figures of a shared machine must be read with. */
export const loadAtStart = loadAverage();

export const machineLine = (): string => `${cpus().length} × ${cpus()[0]?.model ?? 'unknown CPU'}, node ${process.version}`;

export const nowUtc = (): string => new Date().toISOString().slice(0, 16).replace('T', ' ');
