/**
 * End to end over HTTP: the production build against the HTTP stand-ins, for
 * what keeps a production deployment honest: a payment whose webhook never
 * came is applied by the reconciliation cron, the cron routes want the bearer
 * token, health answers cheaply and deeply, and responses carry a request id.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoToken, e2eIp, startE2eWorld, type E2eWorld } from '../support/e2e';

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
});
