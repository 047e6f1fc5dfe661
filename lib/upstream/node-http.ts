/**
 * The store client's transport: the WooCommerce library builds each request
 * (URL, query, OAuth 1.0a signature over http, Basic credentials over https)
 * and axios runs it; this adapter, given to axios through its documented
 * `adapter` option, sends it with Node's own http and https clients over one
 * keep-alive agent per protocol.
 *
 * Why (docs/benchmarks.md): axios's http adapter costs about 0.35 ms
 * of CPU per call more than a plain keep-alive `http.request` (config merging,
 * proxy lookup from the environment on every call, redirect and decompression
 * machinery), on every store call of every flow. What the adapter does not do,
 * on purpose:
 * - follow redirects: the consumer keys must not travel to another host (a 3xx
 *   fails like any answer outside 2xx);
 * - ask for compression: answers are a few kB of JSON;
 * - read HTTP_PROXY: the store is called directly.
 *
 * `timeout` bounds the whole attempt (not only socket idleness): when it runs
 * out, the request is destroyed, which frees its socket. An answer larger than
 * MAX_ANSWER_BYTES is cut off and fails. Failures carry only an error code and,
 * for an answer outside 2xx, its status and parsed body, in the shape the
 * store client reads (lib/store/woocommerce.ts: `describeFailure`); never the
 * URL, which holds the OAuth signature and, with query-string auth, the keys.
 */
import http from 'node:http';
import https from 'node:https';
import { UpstreamHttpError } from '@/lib/errors';

/**
 * One keep-alive agent per protocol for the whole process, the store's and Stripe's, set as Node's own
 * global agents are: the warmest socket first, and an idle socket dropped after 5 s, or a second before
 * the server's `Keep-Alive: timeout=N` hint runs out (Node honours the hint only when the agent has a
 * timeout): a socket the server has closed is never picked for a write, which is not retried.
 */
const AGENT_OPTIONS = { keepAlive: true, scheduling: 'lifo', timeout: 5_000 } as const;
const agents = {
  http: new http.Agent(AGENT_OPTIONS),
  https: new https.Agent(AGENT_OPTIONS),
};

/** Node's client and the keep-alive agent for a protocol. */
export function clientFor(secure: boolean): { request: typeof http.request; agent: http.Agent } {
  return secure ? { request: https.request, agent: agents.https } : { request: http.request, agent: agents.http };
}

/** The most a store answer may hold: a hundred refunds or a large order are far below it. */
export const MAX_ANSWER_BYTES = 8 * 1024 * 1024;

/** What the adapter reads of axios's request configuration (InternalAxiosRequestConfig, structurally). */
export interface AdapterRequest {
  url?: string;
  method?: string;
  params?: Record<string, unknown>;
  auth?: { username: string; password: string };
  headers?: unknown;
  data?: unknown;
  timeout?: number;
  signal?: AbortSignal;
}

export interface AdapterAnswer {
  data: unknown;
  status: number;
  statusText: string;
  headers: http.IncomingHttpHeaders;
  config: AdapterRequest;
  request: http.ClientRequest;
}

function targetOf(request: AdapterRequest): URL {
  const url = new URL(request.url ?? '');
  for (const [key, value] of Object.entries(request.params ?? {})) {
    if (value === undefined || value === null) continue;
    // The library's parameters are strings, numbers and booleans; axios has its own syntax for arrays and
    // objects, which no call here uses: refused rather than sent in another form.
    if (typeof value === 'object' || typeof value === 'function') {
      throw new UpstreamHttpError('store request parameter is not a plain value', 'ERR_BAD_OPTION_VALUE');
    }
    url.searchParams.append(key, String(value));
  }
  return url;
}

function headersOf(request: AdapterRequest, body: string | undefined): http.OutgoingHttpHeaders {
  const source = request.headers as { toJSON?: () => Record<string, unknown> } | Record<string, unknown> | undefined;
  const plain = typeof source?.toJSON === 'function' ? source.toJSON() : ((source ?? {}) as Record<string, unknown>);
  const headers: http.OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(plain)) {
    if (typeof value === 'string' || typeof value === 'number') headers[name.toLowerCase()] = value;
  }
  if (request.auth) {
    headers.authorization = `Basic ${Buffer.from(`${request.auth.username}:${request.auth.password}`, 'utf8').toString('base64')}`;
  }
  if (body !== undefined) headers['content-length'] = Buffer.byteLength(body);
  return headers;
}

function parseAnswer(raw: string): unknown {
  // A byte-order mark before the JSON (a WordPress plugin file saved with one prints it first): axios's
  // adapter stripped it, and JSON.parse refuses it.
  const text = raw.charCodeAt(0) === 0xfeff ? raw.slice(1) : raw;
  if (text === '') return text;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/** The WooCommerce library sends JSON text; a body of any other kind is refused rather than guessed at. */
function bodyOf(data: unknown): string | undefined {
  if (data === undefined || data === null) return undefined;
  if (typeof data === 'string') return data;
  throw new UpstreamHttpError('store request body is not text', 'ERR_BAD_OPTION_VALUE');
}

/** The axios adapter: one attempt, settled once, by the answer, a failure, the timeout or the signal. */
export function nodeHttpAdapter(request: AdapterRequest): Promise<AdapterAnswer> {
  return new Promise((resolve, reject) => {
    const url = targetOf(request);
    const secure = url.protocol === 'https:';
    const body = bodyOf(request.data);
    let settled = false;
    let timer: NodeJS.Timeout | undefined;
    const finish = (outcome: () => void) => {
      if (settled) return;
      settled = true;
      if (timer) clearTimeout(timer);
      request.signal?.removeEventListener('abort', onAbort);
      outcome();
    };
    /** Ends the attempt early: the request is destroyed, and its socket with it. */
    const fail = (message: string, code: string) => {
      finish(() => reject(new UpstreamHttpError(message, code)));
      outgoing.destroy();
    };
    const onAbort = () => fail('store request cancelled', 'ERR_CANCELED');

    const client = clientFor(secure);
    const outgoing = client.request(
      url,
      { method: (request.method ?? 'get').toUpperCase(), headers: headersOf(request, body), agent: client.agent },
      (answer) => {
        const chunks: Buffer[] = [];
        let size = 0;
        answer.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > MAX_ANSWER_BYTES) fail('store answer too large', 'ERR_ANSWER_TOO_LARGE');
          else chunks.push(chunk);
        });
        answer.on('error', () => fail('store answer interrupted', 'ECONNRESET'));
        answer.on('end', () => {
          const status = answer.statusCode ?? 0;
          const data = parseAnswer(Buffer.concat(chunks).toString('utf8'));
          if (status >= 200 && status < 300) {
            finish(() => resolve({ data, status, statusText: answer.statusMessage ?? '', headers: answer.headers, config: request, request: outgoing }));
          } else {
            const code = status >= 500 ? 'ERR_BAD_RESPONSE' : 'ERR_BAD_REQUEST';
            finish(() => reject(new UpstreamHttpError(`store answered ${status}`, code, { status, data })));
          }
        });
      },
    );
    outgoing.on('error', (error: NodeJS.ErrnoException) => fail('store request failed', typeof error.code === 'string' ? error.code : 'ERR_NETWORK'));
    if (request.signal?.aborted) return onAbort();
    request.signal?.addEventListener('abort', onAbort, { once: true });
    if (request.timeout && request.timeout > 0) timer = setTimeout(() => fail('store request timed out', 'ECONNABORTED'), request.timeout);
    outgoing.end(body);
  });
}
