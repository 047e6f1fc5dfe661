/**
 * A deployment whose configuration is invalid keeps answering: every request that needs the configuration
 * gets a clear 500, none crashes, none grants CORS, and the shallow health check still answers.
 */
import { afterEach, describe, expect, it } from 'vitest';
import * as health from '@/app/api/health/route';
import * as paymentIntent from '@/app/api/payment-intent/route';
import { TEST_STOREFRONT_ORIGIN, useTestEnv } from '../support/env';
import { postJson } from '../support/requests';

afterEach(() => useTestEnv());

const preflight = () =>
  new Request('http://localhost:3000/api/payment-intent', {
    method: 'OPTIONS',
    headers: { origin: TEST_STOREFRONT_ORIGIN, 'access-control-request-method': 'POST' },
  });

describe('an invalid configuration', () => {
  it('refuses the preflight of an origin it would otherwise allow, with 403 and no grant', async () => {
    useTestEnv({ UPSTREAM_TIMEOUT_MS: 'abc' });
    const response = await paymentIntent.OPTIONS(preflight());
    expect(response.status).toBe(403);
    expect(response.headers.get('access-control-allow-origin')).toBeNull();
    expect(response.headers.get('vary')).toBe('Origin');
    expect(response.headers.get('x-request-id')).toBeTruthy();
  });

  it('answers a checkout call 500 without a CORS grant, and without details outside development', async () => {
    useTestEnv({ UPSTREAM_TIMEOUT_MS: 'abc' });
    const response = await paymentIntent.POST(postJson('/api/payment-intent', { token: 'x' }));
    expect(response.status).toBe(500);
    expect(response.headers.get('access-control-allow-origin')).toBeNull();
    expect((await response.json()).error).toEqual({ code: 'PAYMENT_INTENT_ERROR', message: 'The service configuration is invalid' });
  });

  it('names the kind of failure in development, as any failure there', async () => {
    useTestEnv({ NODE_ENV: 'development', UPSTREAM_TIMEOUT_MS: 'abc' });
    const response = await paymentIntent.POST(postJson('/api/payment-intent', { token: 'x' }));
    expect(response.status).toBe(500);
    expect((await response.json()).error.details).toEqual({ kind: 'not_configured' });
  });

  it('still answers the shallow health check', async () => {
    useTestEnv({ UPSTREAM_TIMEOUT_MS: 'abc' });
    const response = await health.GET(new Request('http://localhost:3000/api/health'));
    expect(response.status).toBe(200);
  });
});
