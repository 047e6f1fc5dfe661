/**
 * Store faults on demand, around the WooCommerce stand-in: the request the
 * service sends is answered with a fault instead of (or after) the stand-in's
 * own answer. One fault list serves both ways the stand-in is mounted:
 *
 * - `faults.wrap(handler)`: a fetch handler for msw-mounted route tests
 *   (tests/support/providers.ts wraps the store with it: `providers.storeFaults`).
 *   A dropped connection is a network error (`Response.error()`), which the
 *   store client sees exactly as a refused or reset socket: no status, no body.
 * - `startFaultyServer(handler, faults)`: a loopback server for tests that
 *   need the socket itself to misbehave (a TCP reset, a request that never
 *   answers while the client's own timeout runs).
 *
 * `commit` says whether the store applied the request before the answer went
 * wrong: `before` (the default) leaves the stand-in untouched, `after` lets
 * the stand-in apply it (the write is committed) and then loses or replaces
 * the answer. `refused` is always before: a store that refuses the connection
 * never saw the request.
 *
 * A `hang` never answers: the client gives up at its own timeout (a test sets
 * a short UPSTREAM_TIMEOUT_MS), no sleep involved. Hung requests are held
 * until `releaseHangs()` or `clear()`, which end them as dropped connections;
 * `hangStarted()` resolves when the next one begins, for tests that act while
 * a request hangs.
 */
import { type IncomingMessage, type ServerResponse } from 'node:http';
import type { FetchHandler, RunningServer } from '@/stand-ins/loopback-http';
import { listen } from '@/stand-ins/loopback-http';

export const STORE_FAULT_KINDS = [
  'refused',
  'reset',
  'hang',
  'status_500',
  'status_502',
  'status_429',
  'status_403',
  'redirect_302',
  'html_200',
  'truncated_json_200',
] as const;

export type StoreFaultKind = (typeof STORE_FAULT_KINDS)[number];

/** Whether the stand-in applied the request before the answer went wrong. */
export type StoreFaultCommit = 'before' | 'after';

export interface StoreFault {
  kind: StoreFaultKind;
  /** HTTP method to fault (`PUT`, `POST`, …); any method when absent. */
  method?: string;
  /** Matched against the request's path (no query), e.g. /\/orders\/\d+$/. */
  path: RegExp;
  /** Default `before`; `refused` is always `before`. */
  commit?: StoreFaultCommit;
  /** How many matching requests to fault; default 1, `Infinity` until cleared. */
  times?: number;
}

export interface FiredFault {
  kind: StoreFaultKind;
  commit: StoreFaultCommit;
  method: string;
  path: string;
}

export interface StoreFaults {
  inject(fault: StoreFault): void;
  /** Drops every fault not yet fired and releases hung requests. */
  clear(): void;
  /** The faults that fired, in order. */
  readonly fired: readonly FiredFault[];
  /** Ends every hung request as a dropped connection. */
  releaseHangs(): void;
  /** Resolves when the next `hang` fault begins. */
  hangStarted(): Promise<void>;
  /** The msw mount: `handler` behind the faults. */
  wrap(handler: FetchHandler): FetchHandler;
  /** The fault for this request, counted as fired; undefined to let it through. */
  take(method: string, path: string): { kind: StoreFaultKind; commit: StoreFaultCommit } | undefined;
  /** What a `hang` does: waits until released (used by both mounts). */
  holdUntilReleased(): Promise<void>;
}

/** Which faults also let the stand-in apply the request. */
export function appliesRequest(kind: StoreFaultKind, commit: StoreFaultCommit): boolean {
  return kind !== 'refused' && commit === 'after';
}

const HTML_PAGE = '<!DOCTYPE html><html><head><title>Just a moment...</title></head><body><h1>Checking your browser</h1></body></html>';

/** The answer a fault gives in place of the store's (undefined for faults that give no answer at all). */
export async function faultAnswer(kind: StoreFaultKind, applied: Response | undefined): Promise<Response | undefined> {
  const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
    new Response(JSON.stringify(body), { status, headers: { 'Content-Type': 'application/json; charset=UTF-8', ...headers } });
  switch (kind) {
    case 'refused':
    case 'reset':
    case 'hang':
      return undefined;
    case 'status_500':
      // WordPress's own fatal-error answer.
      return json(500, { code: 'internal_server_error', message: 'There has been a critical error on this website.', data: { status: 500 } });
    case 'status_502':
      // A proxy in front of PHP answers, not WordPress: HTML.
      return new Response('<html><body><h1>502 Bad Gateway</h1></body></html>', { status: 502, headers: { 'Content-Type': 'text/html' } });
    case 'status_429':
      return new Response('<html><body>Too Many Requests</body></html>', { status: 429, headers: { 'Content-Type': 'text/html', 'Retry-After': '30' } });
    case 'status_403':
      // A web application firewall refusing the request.
      return new Response('<html><body><h1>403 Forbidden</h1></body></html>', { status: 403, headers: { 'Content-Type': 'text/html' } });
    case 'redirect_302':
      return new Response(null, { status: 302, headers: { Location: 'https://shop.test/wp-login.php?redirect_to=%2Fwp-json%2F' } });
    case 'html_200':
      return new Response(HTML_PAGE, { status: 200, headers: { 'Content-Type': 'text/html; charset=UTF-8' } });
    case 'truncated_json_200': {
      const text = applied ? await applied.clone().text() : JSON.stringify({ id: 0, status: 'pending', meta_data: [] });
      return new Response(text.slice(0, Math.max(1, Math.floor(text.length / 2))), {
        status: 200,
        headers: { 'Content-Type': 'application/json; charset=UTF-8' },
      });
    }
  }
}

export function createStoreFaults(): StoreFaults {
  let pending: Required<StoreFault>[] = [];
  const fired: FiredFault[] = [];
  const hung: (() => void)[] = [];
  const hangWaiters: (() => void)[] = [];

  const faults: StoreFaults = {
    inject(fault) {
      pending.push({
        kind: fault.kind,
        method: fault.method?.toUpperCase() ?? '*',
        path: fault.path,
        commit: fault.kind === 'refused' ? 'before' : (fault.commit ?? 'before'),
        times: fault.times ?? 1,
      });
    },
    clear() {
      pending = [];
      faults.releaseHangs();
    },
    get fired() {
      return fired;
    },
    releaseHangs() {
      for (const release of hung.splice(0)) release();
    },
    hangStarted() {
      return new Promise<void>((resolve) => hangWaiters.push(resolve));
    },
    holdUntilReleased() {
      const released = new Promise<void>((resolve) => hung.push(resolve));
      for (const wake of hangWaiters.splice(0)) wake();
      return released;
    },
    take(method, path) {
      const upper = method.toUpperCase();
      const fault = pending.find((f) => f.times > 0 && (f.method === '*' || f.method === upper) && f.path.test(path));
      if (!fault) return undefined;
      fault.times -= 1;
      fired.push({ kind: fault.kind, commit: fault.commit, method: upper, path });
      return { kind: fault.kind, commit: fault.commit };
    },
    wrap(handler) {
      return async (request) => {
        const fault = faults.take(request.method, new URL(request.url).pathname);
        if (!fault) return handler(request);
        const applied = appliesRequest(fault.kind, fault.commit) ? await handler(request) : undefined;
        if (fault.kind === 'hang') await faults.holdUntilReleased();
        return (await faultAnswer(fault.kind, applied)) ?? Response.error();
      };
    },
  };
  return faults;
}

/**
 * `handler` on a loopback server, behind `faults`, with socket-level faults:
 * `refused` and `reset` destroy the socket with a TCP reset (the request read,
 * nothing answered), `hang` holds the socket open without an answer until
 * released.
 */
export async function startFaultyServer(handler: FetchHandler, faults: StoreFaults): Promise<RunningServer> {
  const toRequest = (request: IncomingMessage, url: URL, body: string): Request => {
    const headers = new Headers();
    for (const [name, value] of Object.entries(request.headers)) {
      if (value === undefined || ['connection', 'keep-alive', 'transfer-encoding', 'content-length', 'host'].includes(name)) continue;
      headers.set(name, Array.isArray(value) ? value.join(', ') : value);
    }
    const method = request.method ?? 'GET';
    return new Request(url, { method, headers, ...(method === 'GET' || method === 'HEAD' || body === '' ? {} : { body }) });
  };
  const write = async (response: ServerResponse, answer: Response) => {
    const payload = Buffer.from(await answer.arrayBuffer());
    const headers: Record<string, string> = {};
    answer.headers.forEach((value, name) => {
      headers[name] = value;
    });
    response.writeHead(answer.status, { ...headers, 'Content-Length': String(payload.length) });
    response.end(payload);
  };
  const drop = (request: IncomingMessage) => {
    const socket = request.socket;
    if (typeof socket.resetAndDestroy === 'function') socket.resetAndDestroy();
    else socket.destroy();
  };

  return listen(
    async (request, response, url, body) => {
      const fault = faults.take(request.method ?? 'GET', url.pathname);
      if (!fault) return write(response, await handler(toRequest(request, url, body)));
      const applied = appliesRequest(fault.kind, fault.commit) ? await handler(toRequest(request, url, body)) : undefined;
      if (fault.kind === 'hang') {
        await faults.holdUntilReleased();
        return drop(request);
      }
      const answer = await faultAnswer(fault.kind, applied);
      if (!answer) return drop(request);
      return write(response, answer);
    },
    0,
    'faulty store',
  );
}
