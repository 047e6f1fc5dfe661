/**
 * The one transport under the three upstreams (the store's axios adapter, Stripe's HttpClient, ShipStation):
 * Node's http over one keep-alive agent per protocol, the cheapest in CPU (docs/benchmarks.md). No redirect is
 * followed, no answer read past its limit, no attempt outlives its timeout or the request's deadline, and a
 * failure carries only a code (and, from the adapter, the status and body): never the URL, which holds keys.
 */
import http from 'node:http';
import https from 'node:https';
import { UpstreamHttpError } from '@/lib/errors';
import { requestTimeLeftMs } from '@/lib/upstream/budget';

/**
 * The warmest socket first, and an idle one dropped after 5 s, or a second before the server's `Keep-Alive:
 * timeout=N` hint runs out (Node honours it only when the agent has a timeout): a closed socket is never written to.
 */
const AGENT_OPTIONS = { keepAlive: true, scheduling: 'lifo', timeout: 5_000 } as const;
const agents = { http: new http.Agent(AGENT_OPTIONS), https: new https.Agent(AGENT_OPTIONS) };

/** The most a store answer may hold: a hundred refunds or a large order are far below it. */
export const MAX_ANSWER_BYTES = 8 * 1024 * 1024;

export interface UpstreamRequest {
  url: URL;
  method: string;
  headers: http.OutgoingHttpHeaders;
  body?: string | undefined;
  /** The whole attempt, cut to what the request has left: the request is destroyed, and its socket with it. */
  timeoutMs: number;
  maxBytes?: number;
  signal?: AbortSignal | undefined;
}

export interface UpstreamAnswer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

/** One attempt, settled once: an answer of any status (a 3xx included), or an UpstreamHttpError with a code. */
export function send(request: UpstreamRequest): Promise<UpstreamAnswer> {
  return new Promise((resolve, reject) => {
    const maxBytes = request.maxBytes ?? MAX_ANSWER_BYTES;
    const { signal } = request;
    let timer: NodeJS.Timeout | undefined;
    let settled = false;
    const finish = (outcome: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      outcome();
    };
    /** Ends an unsettled attempt: the request is destroyed, and its socket with it (never a settled one's, back in the pool). */
    const fail = (message: string, code: string) => {
      if (settled) return;
      finish(() => reject(new UpstreamHttpError(message, code)));
      outgoing.destroy();
    };
    const onAbort = () => fail('upstream request cancelled', 'ERR_CANCELED');
    const secure = request.url.protocol === 'https:';
    const { body } = request;
    const headers = body === undefined ? request.headers : { ...request.headers, 'content-length': Buffer.byteLength(body) };
    const options = { method: request.method, headers, agent: secure ? agents.https : agents.http };
    const outgoing = (secure ? https : http).request(request.url, options, (answer) => {
      if (Number(answer.headers['content-length']) > maxBytes) return fail('upstream answer too large', 'ERR_ANSWER_TOO_LARGE');
      const chunks: Buffer[] = [];
      let size = 0;
      answer.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > maxBytes) fail('upstream answer too large', 'ERR_ANSWER_TOO_LARGE');
        else chunks.push(chunk);
      });
      // Not ECONNRESET: the Stripe SDK would resend a call whose answer had begun.
      const interrupted = () => fail('upstream answer interrupted', 'ERR_ANSWER_INTERRUPTED');
      answer.on('error', interrupted);
      answer.once('close', () => {
        if (!answer.complete) interrupted();
      });
      const status = answer.statusCode ?? 0;
      answer.on('end', () => finish(() => resolve({ status, headers: answer.headers, body: Buffer.concat(chunks) })));
    });
    outgoing.on('error', (error: NodeJS.ErrnoException) => fail('upstream request failed', error.code ?? 'ERR_NETWORK'));
    if (signal?.aborted) return onAbort();
    signal?.addEventListener('abort', onAbort, { once: true });
    const timeoutMs = Math.max(0, Math.min(request.timeoutMs, requestTimeLeftMs()));
    if (Number.isFinite(timeoutMs)) timer = setTimeout(() => fail('upstream request timed out', 'ECONNABORTED'), timeoutMs);
    outgoing.end(body);
  });
}

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

function targetOf(request: AdapterRequest): URL {
  const url = new URL(request.url ?? '');
  for (const [key, value] of Object.entries(request.params ?? {})) {
    if (value === undefined || value === null) continue;
    // axios has its own syntax for arrays and objects, which no call here uses: refused rather than sent otherwise.
    if (typeof value === 'object' || typeof value === 'function') {
      throw new UpstreamHttpError('store request parameter is not a plain value', 'ERR_BAD_OPTION_VALUE');
    }
    url.searchParams.append(key, String(value));
  }
  return url;
}

function headersOf(request: AdapterRequest): http.OutgoingHttpHeaders {
  const source = request.headers as { toJSON?: () => Record<string, unknown> } | Record<string, unknown> | undefined;
  const plain = typeof source?.toJSON === 'function' ? source.toJSON() : ((source ?? {}) as Record<string, unknown>);
  const headers: http.OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(plain)) {
    if (typeof value === 'string' || typeof value === 'number') headers[name.toLowerCase()] = value;
  }
  if (request.auth) {
    headers.authorization = `Basic ${Buffer.from(`${request.auth.username}:${request.auth.password}`, 'utf8').toString('base64')}`;
  }
  return headers;
}

/** JSON, else the text; a byte-order mark first (a WordPress plugin file saved with one prints it) is dropped, as axios did. */
function parseAnswer(raw: string): unknown {
  const text = raw.charCodeAt(0) === 0xfeff ? raw.slice(1) : raw;
  if (text === '') return text;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/**
 * The store client's axios adapter (axios's documented `adapter` option): the WooCommerce library builds and
 * signs each request; an answer outside 2xx fails with its status and parsed body, as lib/store/woocommerce.ts reads it.
 */
export async function nodeHttpAdapter(request: AdapterRequest) {
  const url = targetOf(request);
  // The library sends JSON text; a body of any other kind is refused rather than guessed at.
  if (request.data !== undefined && request.data !== null && typeof request.data !== 'string') {
    throw new UpstreamHttpError('store request body is not text', 'ERR_BAD_OPTION_VALUE');
  }
  const method = (request.method ?? 'get').toUpperCase();
  const body = request.data ?? undefined;
  const timeoutMs = request.timeout && request.timeout > 0 ? request.timeout : Number.POSITIVE_INFINITY;
  const answer = await send({ url, method, headers: headersOf(request), body, timeoutMs, signal: request.signal });
  const data = parseAnswer(answer.body.toString('utf8'));
  const { status } = answer;
  if (status < 200 || status >= 300) {
    throw new UpstreamHttpError(`store answered ${status}`, status >= 500 ? 'ERR_BAD_RESPONSE' : 'ERR_BAD_REQUEST', { status, data });
  }
  return { data, status, statusText: '', headers: answer.headers, config: request };
}
