/**
 * Request ids: every response carries `x-request-id` (the caller's when sane,
 * a fresh one otherwise), and every log line written while handling the
 * request names it, with the route.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { OPTIONS, POST as PAYMENT_INTENT } from '@/app/api/payment-intent/route';
import { POST as SHIPPING_WEBHOOK } from '@/app/api/shipping/webhook/route';
import { useTestEnv } from '../support/env';
import { useProviders } from '../support/providers';
import { awayFromWindowEdge, freshIp, postJson, tokenFor } from '../support/requests';
import { loggedLines } from '../support/setup';

const providers = useProviders();

beforeEach(() => {
  useTestEnv();
  providers.reset();
});

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('request ids', () => {
  it("echoes a sane caller's id and tags every log line of the request with it and the route", async () => {
    providers.woo.seed({ id: 900, status: 'processing' });
    // A batch whose store update fails logs a warning deep inside the use case, besides the request line.
    providers.failStore('PUT', /\/orders\/900$/, 400, 'woocommerce_rest_shop_order_invalid');
    const response = await SHIPPING_WEBHOOK(
      postJson('/api/shipping/webhook', { resource_type: 'SHIP_NOTIFY', order_number: '900' }, { headers: { 'x-request-id': 'edge-req_42:abc.DEF' } }),
    );
    expect(response.status).toBe(200);
    expect(response.headers.get('x-request-id')).toBe('edge-req_42:abc.DEF');
    const lines = loggedLines();
    expect(lines.map((l) => l.event)).toEqual(expect.arrayContaining(['shipping.order_update_failed', 'request']));
    for (const line of lines) {
      expect(line).toMatchObject({ requestId: 'edge-req_42:abc.DEF', route: '/api/shipping/webhook' });
    }
    expect(lines.find((l) => l.event === 'request')).toMatchObject({ status: 200, orderId: 900 });
  });

  it('replaces an id that is too long or carries unsafe characters with a fresh one', async () => {
    for (const given of ['x'.repeat(129), 'has space', 'quote"and\\slash', '{"json":1}', '']) {
      const response = await SHIPPING_WEBHOOK(
        postJson('/api/shipping/webhook', { resource_type: 'ORDER_NOTIFY' }, { headers: { 'x-request-id': given } }),
      );
      const id = response.headers.get('x-request-id');
      expect(id).toMatch(UUID);
      expect(JSON.stringify(loggedLines())).not.toContain(given || '"requestId":""');
    }
  });

  it('gives two requests without an id two different ids', async () => {
    const first = await SHIPPING_WEBHOOK(postJson('/api/shipping/webhook', { resource_type: 'ORDER_NOTIFY' }));
    const second = await SHIPPING_WEBHOOK(postJson('/api/shipping/webhook', { resource_type: 'ORDER_NOTIFY' }));
    expect(first.headers.get('x-request-id')).toMatch(UUID);
    expect(second.headers.get('x-request-id')).not.toBe(first.headers.get('x-request-id'));
  });

  it('is on error answers, 429s and preflights too', async () => {
    // Eleven requests must fall in one rate-limit window (windows are aligned to the clock).
    await awayFromWindowEdge();
    const ip = freshIp();
    const token = await tokenFor(901);
    const failed = await PAYMENT_INTENT(postJson('/api/payment-intent', { token }, { ip, headers: { 'x-request-id': 'err-1' } }));
    expect(failed.status).toBe(500);
    expect(failed.headers.get('x-request-id')).toBe('err-1');
    // A browser storefront on another origin may read it (to quote it to the shop owner).
    expect(failed.headers.get('access-control-expose-headers')?.toLowerCase().split(/\s*,\s*/)).toContain('x-request-id');
    for (let i = 0; i < 9; i += 1) await PAYMENT_INTENT(postJson('/api/payment-intent', { token }, { ip }));
    const limited = await PAYMENT_INTENT(postJson('/api/payment-intent', { token }, { ip, headers: { 'x-request-id': 'limited-1' } }));
    expect(limited.status).toBe(429);
    expect(limited.headers.get('x-request-id')).toBe('limited-1');

    const preflight = await OPTIONS(
      new Request('http://localhost:3000/api/payment-intent', {
        method: 'OPTIONS',
        headers: { origin: 'https://storefront.test', 'access-control-request-method': 'POST', 'x-request-id': 'pre-1' },
      }),
    );
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('x-request-id')).toBe('pre-1');
  });
});
