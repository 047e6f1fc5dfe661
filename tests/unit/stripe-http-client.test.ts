/**
 * The Stripe SDK's HTTP client (lib/card/stripe-http.ts) against a real
 * loopback server: answers reach the SDK as its own client would hand them
 * over, and `timeout` bounds the whole call, an answer that drips or never
 * starts included, closing the socket when the time is up.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import Stripe from 'stripe';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { StripeCardProvider } from '@/lib/card/stripe';
import { BoundedNodeHttpClient } from '@/lib/card/stripe-http';

let server: Server;
let port: number;
const sockets = new Set<Socket>();
let handler: (request: IncomingMessage, response: ServerResponse) => void;
let seen: { method: string; url: string; body: string; authorization: string | undefined }[];

beforeAll(async () => {
  server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      seen.push({ method: request.method ?? '', url: request.url ?? '', body, authorization: request.headers.authorization });
      handler(request, response);
    });
  });
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});

afterAll(async () => {
  for (const socket of sockets) socket.destroy();
  await new Promise((resolve) => server.close(resolve));
});

/** The sockets the current test's dripping answers went out on. */
let dripSockets: Socket[];
/** Resolved once the current test's call has reached the server (and, for a drip, a few drops have gone out). */
let arrived: Promise<void>;
let arrive: () => void;

beforeEach(() => {
  seen = [];
  dripSockets = [];
  arrived = new Promise((resolve) => (arrive = resolve));
});

/** Headers at once, then one space every 20 ms, for ever: never idle, never done. */
function dripping(request: IncomingMessage, response: ServerResponse): void {
  dripSockets.push(request.socket);
  response.writeHead(200, { 'content-type': 'application/json' });
  let drops = 0;
  const drip = setInterval(() => {
    response.write(' ');
    if ((drops += 1) === 3) arrive();
  }, 20);
  response.on('close', () => clearInterval(drip));
}

/**
 * Runs a call with a 300 ms timeout on a fake clock (only setTimeout: the loopback server's drip keeps its real
 * interval), once the call is on the server: not settled at 299 ms, failed at 300 ms. The answer never ends, so
 * nothing but the timer can end the call.
 */
async function failureAtTimeout(call: () => Promise<unknown>): Promise<unknown> {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
  try {
    let settled = false;
    const attempt = call()
      .then(
        () => undefined,
        (error: unknown) => error,
      )
      .finally(() => (settled = true));
    await arrived;
    await vi.advanceTimersByTimeAsync(299);
    await new Promise((resolve) => setImmediate(resolve));
    expect(settled).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    return await attempt;
  } finally {
    vi.useRealTimers();
  }
}

const INTENT = {
  id: 'pi_bounded_1',
  object: 'payment_intent',
  amount: 4500,
  currency: 'usd',
  status: 'requires_payment_method',
  client_secret: 'pi_bounded_1_secret_x',
  metadata: { shop_order_id: '77' },
};

const sdk = (timeout: number) =>
  new Stripe('sk_test_bounded', {
    httpClient: new BoundedNodeHttpClient(),
    protocol: 'http',
    host: '127.0.0.1',
    port,
    timeout,
    maxNetworkRetries: 0,
    telemetry: false,
  });

describe('the bounded Stripe client', () => {
  it('carries a call and its answer as the SDK expects', async () => {
    handler = (_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json', 'request-id': 'req_1' });
      response.end(JSON.stringify(INTENT));
    };
    const intent = await sdk(2000).paymentIntents.create({ amount: 4500, currency: 'usd', metadata: { shop_order_id: '77' } }, { idempotencyKey: 'k-1' });
    expect(intent).toMatchObject({ id: 'pi_bounded_1', amount: 4500 });
    expect(intent.lastResponse.requestId).toBe('req_1');
    expect(seen[0]).toMatchObject({ method: 'POST', url: '/v1/payment_intents', authorization: 'Bearer sk_test_bounded' });
    expect(new URLSearchParams(seen[0]?.body).get('metadata[shop_order_id]')).toBe('77');
  });

  it("hands Stripe's errors to the SDK as its own client does", async () => {
    handler = (_request, response) => {
      response.writeHead(404, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ error: { type: 'invalid_request_error', code: 'resource_missing', message: 'No such payment_intent' } }));
    };
    await expect(sdk(2000).paymentIntents.retrieve('pi_missing')).rejects.toMatchObject({ type: 'StripeInvalidRequestError', code: 'resource_missing' });
  });

  it('ends a call whose answer drips, however long each pause is, at its timeout, and closes the socket', async () => {
    handler = dripping;
    const error = await failureAtTimeout(() => sdk(300).paymentIntents.retrieve('pi_drip'));
    expect(error).toBeInstanceOf(Stripe.errors.StripeConnectionError);
    expect(error).toMatchObject({ message: 'Request aborted due to timeout being reached (300ms)' });
    await expect.poll(() => dripSockets.length > 0 && dripSockets.every((socket) => socket.destroyed), { timeout: 3000 }).toBe(true);
  });

  it('ends a call whose answer never starts at its timeout', async () => {
    handler = () => arrive();
    const error = await failureAtTimeout(() => sdk(300).paymentIntents.retrieve('pi_silent'));
    expect(error).toBeInstanceOf(Stripe.errors.StripeConnectionError);
    expect(error).toMatchObject({ message: 'Request aborted due to timeout being reached (300ms)' });
  });

  it('is the client the card provider uses', async () => {
    handler = dripping;
    const provider = new StripeCardProvider({ secretKey: 'sk_test_bounded', webhookSecrets: [], apiBaseUrl: `http://127.0.0.1:${port}` }, 300);
    await expect(provider.retrievePaymentIntent('pi_drip')).rejects.toMatchObject({ type: 'timeout' });
    // The provider gives up at the bound; the abandoned call's socket is closed too, not held by the drip.
    await expect.poll(() => dripSockets.length > 0 && dripSockets.every((socket) => socket.destroyed), { timeout: 3000 }).toBe(true);
  });
});
