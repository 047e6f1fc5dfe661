/** The request log line's level: `error` only for a failure of the service or its upstreams. */
import { beforeEach, describe, expect, it } from 'vitest';
import * as paymentIntent from '@/app/api/payment-intent/route';
import { useTestEnv } from '../support/env';
import { useProviders } from '../support/providers';
import { postJson, tokenFor } from '../support/requests';
import { loggedLines } from '../support/setup';

const providers = useProviders();

beforeEach(() => {
  useTestEnv();
  providers.reset();
  providers.woo.seed({ id: 610, lines: [{ total: '12.00' }] });
});

const post = (body: unknown, options: Parameters<typeof postJson>[2] = {}) =>
  paymentIntent.POST(postJson('/api/payment-intent', body, options));
const requestLine = () => loggedLines().find((line) => line.event === 'request');

describe('request log level', () => {
  it('logs a bad checkout token at warn, keeping the 500', async () => {
    const response = await post({ token: 'not-a-token' });
    expect(response.status).toBe(500);
    expect(requestLine()).toMatchObject({ level: 'warn', status: 500, error: 'invalid_token' });
  });

  it('logs a disallowed origin at warn, keeping the 500', async () => {
    const response = await post({ token: await tokenFor(610) }, { origin: 'https://evil.test' });
    expect(response.status).toBe(500);
    expect(requestLine()).toMatchObject({ level: 'warn', status: 500, error: 'invalid_origin' });
  });

  it('still logs an upstream failure at error', async () => {
    providers.failCard('POST', /\/v1\/payment_intents$/, 402, 'card_error', 'account_invalid');
    const response = await post({ token: await tokenFor(610), billing_address: { first_name: 'Ada', city: 'London', country: 'GB' } });
    expect(response.status).toBe(500);
    expect(requestLine()).toMatchObject({ level: 'error', status: 500 });
  });
});
