/**
 * A client that goes away mid-body is not the service's fault: a request body
 * stream that fails (a socket closed mid-body, a malformed chunked encoding:
 * Node's parser errors the request) or that ends before its Content-Length is
 * answered 400 and logged below error level, never as `request.unexpected_error`
 * with 500, the lines docs/operations.md says to alert on. Nothing reaches the store.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { POST as paymentIntent } from '@/app/api/payment-intent/route';
import { POST as submitOrder } from '@/app/api/submit-order/route';
import { POST as cardWebhook } from '@/app/api/cardprovider/webhook/route';
import { POST as shippingWebhook } from '@/app/api/shipping/webhook/route';
import { TEST_STOREFRONT_ORIGIN, useTestEnv } from '../support/env';
import { useProviders } from '../support/providers';
import { freshIp, tokenFor } from '../support/requests';
import { loggedLines } from '../support/setup';

const providers = useProviders();

beforeEach(() => {
  useTestEnv();
  providers.reset();
});

type Shape = 'stream_error' | 'short_body';

/** A body that sends its first bytes and then fails as Node's request stream does when the client goes away. */
function brokenBody(first: string, shape: Shape): ReadableStream<Uint8Array> {
  let sent = false;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (!sent) {
        sent = true;
        controller.enqueue(new TextEncoder().encode(first));
        return;
      }
      if (shape === 'stream_error') controller.error(Object.assign(new Error('aborted'), { code: 'ECONNRESET' }));
      else controller.close();
    },
  });
}

async function post(path: string, handler: (request: Request) => Promise<Response>, body: string, shape: Shape, headers: Record<string, string> = {}) {
  const first = body.slice(0, Math.floor(body.length / 2));
  const request = new Request(`http://localhost:3000${path}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'content-length': String(Buffer.byteLength(body)),
      'x-forwarded-for': freshIp(),
      ...headers,
    },
    body: brokenBody(first, shape),
    duplex: 'half',
  } as RequestInit);
  const response = await handler(request);
  return { status: response.status, body: await response.json() };
}

function expectLoggedAsAborted(route: string) {
  const lines = loggedLines();
  expect(lines.filter((line) => line.event === 'request.unexpected_error')).toEqual([]);
  expect(lines.filter((line) => line.level === 'error')).toEqual([]);
  expect(lines.filter((line) => line.event === 'request')).toEqual([
    expect.objectContaining({ level: 'warn', route, status: 400, error: 'request_aborted' }),
  ]);
}

describe('a request body that does not arrive whole', () => {
  for (const shape of ['stream_error', 'short_body'] as const) {
    it(`checkout endpoints answer 400 Invalid request and write nothing (${shape})`, async () => {
      providers.woo.seed({ id: 701 });
      const body = JSON.stringify({ token: await tokenFor(701), billing_address: { first_name: 'Ada', city: 'London' } });
      for (const [path, handler] of [
        ['/api/payment-intent', paymentIntent],
        ['/api/submit-order', submitOrder],
      ] as const) {
        const answer = await post(path, handler, body, shape, { origin: TEST_STOREFRONT_ORIGIN });
        expect(answer).toEqual({
          status: 400,
          body: { error: 'Invalid request', details: [{ code: 'custom', path: [], message: 'Request body was not received whole' }] },
        });
        expectLoggedAsAborted(path);
        (console.log as unknown as { mockClear(): void }).mockClear();
        (console.warn as unknown as { mockClear(): void }).mockClear();
      }
      expect(providers.calls).toEqual([]);
    });

    it(`the card webhook answers 400 so Stripe delivers again (${shape})`, async () => {
      const answer = await post('/api/cardprovider/webhook', cardWebhook, JSON.stringify({ id: 'evt_1', type: 'payment_intent.succeeded' }), shape, {
        'stripe-signature': 't=1,v1=00',
      });
      expect(answer).toEqual({ status: 400, body: { error: 'Request body was not received whole' } });
      expectLoggedAsAborted('/api/cardprovider/webhook');
      expect(providers.calls).toEqual([]);
    });

    it(`the shipping webhook answers 400 rather than acknowledge a notification it never read (${shape})`, async () => {
      const answer = await post('/api/shipping/webhook', shippingWebhook, JSON.stringify({ resource_type: 'SHIP_NOTIFY', order_number: '701' }), shape);
      expect(answer).toEqual({ status: 400, body: { error: 'Request body was not received whole' } });
      expectLoggedAsAborted('/api/shipping/webhook');
      expect(providers.calls).toEqual([]);
    });
  }

  it('a whole body is read as before, Content-Length or not', async () => {
    providers.woo.seed({ id: 702 });
    const body = JSON.stringify({ token: await tokenFor(702) });
    for (const length of [String(Buffer.byteLength(body)), undefined]) {
      const response = await submitOrder(
        new Request('http://localhost:3000/api/submit-order', {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            origin: TEST_STOREFRONT_ORIGIN,
            'x-forwarded-for': freshIp(),
            ...(length ? { 'content-length': length } : {}),
          },
          body,
        }),
      );
      // submit-order wants billing_address: a validation failure, read whole.
      expect(response.status).toBe(400);
      expect((await response.json()).details[0].path).toEqual(['billing_address']);
    }
  });
});
