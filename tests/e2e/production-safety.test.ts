/**
 * End to end over HTTP: the production build against the HTTP stand-ins, for
 * what keeps a production deployment honest: a payment whose webhook never
 * came is applied by the reconciliation cron, the cron routes want the bearer
 * token, health answers cheaply and deeply, responses carry a request id, and
 * a client that goes away mid-body is not logged as the service's failure.
 */
import { readFileSync } from 'node:fs';
import { createConnection } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ARTIFACTS, demoToken, e2eIp, startE2eWorld, type E2eWorld } from '../support/e2e';

const STOREFRONT = 'https://storefront.e2e.test';
const CRON_SECRET = 'e2e-cron-secret-0123456789abcdef';
let world: E2eWorld;

beforeAll(async () => {
  world = await startE2eWorld('production-safety', { allowedOrigins: [STOREFRONT], extraEnv: { CRON_SECRET } });
});

afterAll(async () => {
  await world?.close();
});

const get = async (path: string, headers: Record<string, string> = {}) => {
  const response = await fetch(`${world.service.url}${path}`, { headers });
  return { status: response.status, headers: response.headers, body: await response.json() };
};
const bearer = { Authorization: `Bearer ${CRON_SECRET}` };

describe('production safety net', () => {
  it('health answers ok cheaply, and with the cron token checks the store and the card provider', async () => {
    const shallow = await get('/api/health', { 'x-request-id': 'e2e-health-1' });
    expect(shallow).toMatchObject({ status: 200, body: { status: 'ok', version: expect.any(String) } });
    expect(shallow.headers.get('x-request-id')).toBe('e2e-health-1');

    const deep = await get('/api/health', bearer);
    expect(deep.status).toBe(200);
    expect(deep.body.checks).toEqual({
      store: { ok: true, latencyMs: expect.any(Number) },
      card: { ok: true, latencyMs: expect.any(Number) },
    });
  });

  it('the cron routes answer 401 without the bearer token', async () => {
    expect((await get('/api/cron/reconcile-payments')).status).toBe(401);
    expect((await get('/api/cron/retry-shipping', { Authorization: 'Bearer nope' })).status).toBe(401);
  });

  it('a card payment whose webhook never arrived is applied by the reconciliation cron', async () => {
    const response = await fetch(`${world.service.url}/api/payment-intent`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Origin: STOREFRONT, 'X-Forwarded-For': e2eIp() },
      body: JSON.stringify({ token: await demoToken(1001) }),
    });
    expect(response.status).toBe(200);
    const { payment_intent_id: intentId } = (await response.json()) as { payment_intent_id: string };
    // The customer pays; Stripe records the event, and no webhook is delivered.
    world.standIns.stripe.model.succeed(intentId);

    const first = await get('/api/cron/reconcile-payments', bearer);
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ checked: 1, applied: 1, skipped: 0, failed: [], complete: true });
    const order = (await (await fetch(`${world.woocommerceUrl}/demo/orders/1001`)).json()) as { status: string };
    expect(order.status).toBe('processing');

    // The next run finds it applied.
    expect((await get('/api/cron/reconcile-payments', bearer)).body).toMatchObject({ checked: 1, applied: 0, skipped: 1 });
    expect((await get('/api/cron/retry-shipping', bearer)).body).toMatchObject({ checked: 0, parkedTotal: 0 });
  });

  it('a client that goes away mid-body is answered 400 or nothing, and logged as an aborted request, never as an error', async () => {
    const { port } = new URL(world.service.url);
    const body = JSON.stringify({ token: await demoToken(1002), billing_address: { first_name: 'Ada', city: 'London' } });
    const head = (requestId: string, path: string, framing: string) =>
      `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\nOrigin: ${STOREFRONT}\r\n` +
      `X-Forwarded-For: ${e2eIp()}\r\nX-Request-Id: ${requestId}\r\nConnection: close\r\n${framing}\r\n`;
    const cases = [
      // Fewer bytes than Content-Length, then the client closes its side: it can still read an answer.
      { id: 'e2e-abort-short', path: '/api/payment-intent', send: head('e2e-abort-short', '/api/payment-intent', `Content-Length: ${body.length}\r\n`) + body.slice(0, 40), end: 'half-close' },
      // The socket is closed mid-body: nobody is left to answer.
      { id: 'e2e-abort-closed', path: '/api/cardprovider/webhook', send: head('e2e-abort-closed', '/api/cardprovider/webhook', `Stripe-Signature: t=1,v1=00\r\nContent-Length: ${body.length}\r\n`) + body.slice(0, 40), end: 'destroy' },
      // A chunk size that is no hexadecimal number: Node's parser fails the request mid-body.
      { id: 'e2e-abort-chunked', path: '/api/submit-order', send: head('e2e-abort-chunked', '/api/submit-order', 'Transfer-Encoding: chunked\r\n') + `10\r\n${body.slice(0, 16)}\r\nZZ\r\n`, end: 'half-close' },
    ] as const;

    const answers = new Map<string, string>();
    for (const c of cases) {
      answers.set(
        c.id,
        await new Promise<string>((resolve) => {
          let received = '';
          const socket = createConnection({ host: '127.0.0.1', port: Number(port) }, () => {
            socket.write(c.send, () => {
              if (c.end === 'destroy') {
                socket.destroy();
                resolve('');
              } else {
                socket.end();
              }
            });
          });
          socket.on('data', (chunk) => (received += chunk.toString('latin1')));
          socket.on('close', () => resolve(received));
          socket.on('error', () => resolve(received));
        }),
      );
    }
    // An answer, when one came, is a 400: never a 500.
    for (const c of cases) {
      const status = /^HTTP\/1\.1 (\d{3})/.exec(answers.get(c.id) ?? '')?.[1];
      if (status !== undefined) expect(status, c.id).toBe('400');
    }
    expect(answers.get('e2e-abort-short')).toMatch(/^HTTP\/1\.1 400/);

    // The service writes its log asynchronously: wait for each request's line, then read them all.
    const logFile = join(ARTIFACTS, 'e2e-production-safety.log');
    const linesOf = (id: string) =>
      readFileSync(logFile, 'utf8')
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as Record<string, unknown>)
        .filter((line) => line.requestId === id);
    const deadline = Date.now() + 10_000;
    while (!cases.every((c) => linesOf(c.id).some((line) => line.event === 'request')) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    for (const c of cases) {
      const lines = linesOf(c.id);
      // A chunked body whose request Next.js saw aborted before handing it over arrives empty: invalid, not aborted.
      const kinds = c.id === 'e2e-abort-chunked' ? /^(request_aborted|invalid_request)$/ : /^request_aborted$/;
      expect(lines.filter((line) => line.event === 'request'), c.id).toEqual([
        expect.objectContaining({ level: 'warn', route: c.path, status: 400, error: expect.stringMatching(kinds) }),
      ]);
      expect(lines.filter((line) => line.level === 'error' || line.event === 'request.unexpected_error'), c.id).toEqual([]);
    }
  });
});
