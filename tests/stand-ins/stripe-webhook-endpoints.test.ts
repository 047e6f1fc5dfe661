/** The Stripe stand-in's webhook endpoints API behaves as Stripe's, through the real SDK. */
import { http } from 'msw';
import { setupServer } from 'msw/node';
import Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stripeApiHandler } from '@/stand-ins/stripe/fetch-handler';
import { StripeModel } from '@/stand-ins/stripe/model';

const KEY = 'sk_test_stand_in_0123456789';
const model = new StripeModel();
const server = setupServer(http.all('https://api.stripe.com/*', ({ request }) => stripeApiHandler(model, KEY)(request)));
beforeAll(() => server.listen({ onUnhandledRequest: 'error' }));
afterAll(() => server.close());
const stripe = new Stripe(KEY, { maxNetworkRetries: 0, telemetry: false });

describe('Stripe stand-in: webhook endpoints', () => {
  it('returns the secret on create only, and keeps the API version it was created with', async () => {
    const created = await stripe.webhookEndpoints.create({ url: 'https://pay.example.test/api/stripe/webhook', enabled_events: ['payment_intent.succeeded'], api_version: '2024-06-20' });
    expect(created.secret).toMatch(/^whsec_/);
    expect(created).toMatchObject({ api_version: '2024-06-20', status: 'enabled' });
    const read = await stripe.webhookEndpoints.retrieve(created.id);
    expect(read.secret).toBeUndefined();
    await expect(
      stripe.webhookEndpoints.update(created.id, { api_version: '2026-10-28.endive' } as Stripe.WebhookEndpointUpdateParams),
    ).rejects.toMatchObject({ statusCode: 400, code: 'parameter_unknown', param: 'api_version' });
    const updated = await stripe.webhookEndpoints.update(created.id, { disabled: true, enabled_events: ['charge.refunded', 'refund.updated'], url: 'https://pay.example.test/x' });
    expect(updated).toMatchObject({ status: 'disabled', enabled_events: ['charge.refunded', 'refund.updated'], url: 'https://pay.example.test/x', api_version: '2024-06-20' });
    expect(updated.secret).toBeUndefined();
  });

  it("follows the account's default version (null) when created without one", async () => {
    const created = await stripe.webhookEndpoints.create({ url: 'https://pay.example.test/a', enabled_events: ['*'] });
    expect(created.api_version).toBeNull();
  });

  it('lists newest first, a page at a time, and deletes', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 5; i += 1) ids.push((await stripe.webhookEndpoints.create({ url: `https://p${i}.example.test/h`, enabled_events: ['*'] })).id);
    const first = await stripe.webhookEndpoints.list({ limit: 2 });
    expect(first.data.map((e) => e.id)).toEqual([ids[4], ids[3]]);
    expect(first.has_more).toBe(true);
    const second = await stripe.webhookEndpoints.list({ limit: 2, starting_after: ids[3]! });
    expect(second.data.map((e) => e.id)).toEqual([ids[2], ids[1]]);
    expect(await stripe.webhookEndpoints.del(ids[0]!)).toMatchObject({ id: ids[0], deleted: true });
    await expect(stripe.webhookEndpoints.retrieve(ids[0]!)).rejects.toMatchObject({ statusCode: 404, code: 'resource_missing' });
  });
});
