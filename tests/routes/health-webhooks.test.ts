/** The deep health check reads the Stripe webhook endpoints and says, in plain words, what is wrong with this deployment's. */
import { beforeEach, describe, expect, it } from 'vitest';
import { GET } from '@/app/api/health/route';
import { STRIPE_SDK_API_VERSION, stripeWebhookEvents } from '@/lib/webhooks/setup/events';
import { secretFingerprint } from '@/lib/webhooks/setup/stripe-setup';
import { TEST_CRON_SECRET, TEST_STRIPE_KEY, TEST_WEBHOOK_SECRET, useTestEnv } from '../support/env';
import { useProviders } from '../support/providers';
import { loggedLines } from '../support/setup';

const providers = useProviders();
const SERVICE = 'https://pay.example.test';
const EVENTS = stripeWebhookEvents({ lifecycleEvents: new Set(), capture: 'automatic' });

beforeEach(() => {
  useTestEnv({ CRON_SECRET: TEST_CRON_SECRET, SERVICE_URL: SERVICE });
  providers.reset();
});

async function deepHealth() {
  const response = await GET(new Request('http://localhost:3000/api/health', { headers: { authorization: `Bearer ${TEST_CRON_SECRET}` } }));
  return { status: response.status, body: await response.json() };
}

const seed = (fields: Partial<Parameters<typeof providers.stripe.webhookEndpoints.seed>[0]> = {}) =>
  providers.stripe.webhookEndpoints.seed({ url: `${SERVICE}/api/stripe/webhook`, enabled_events: EVENTS, api_version: STRIPE_SDK_API_VERSION, ...fields });

describe('health of the Stripe webhook', () => {
  it('is ok when an enabled endpoint points at this deployment with every handled event and the SDK API version', async () => {
    seed();
    const { status, body } = await deepHealth();
    expect(status).toBe(200);
    expect(body.checks.cardWebhook).toEqual({ ok: true, latencyMs: expect.any(Number) });
  });

  it('accepts the neutral path and an endpoint sending every event', async () => {
    seed({ url: `${SERVICE}/api/cardprovider/webhook`, enabled_events: ['*'] });
    expect((await deepHealth()).body.checks.cardWebhook.ok).toBe(true);
  });

  it('reports degraded when no endpoint points at this deployment', async () => {
    seed({ url: 'https://old-domain.example.test/api/stripe/webhook' });
    const { status, body } = await deepHealth();
    expect(status).toBe(503);
    expect(body.status).toBe('degraded');
    expect(body.checks.cardWebhook).toEqual({
      ok: false,
      latencyMs: expect.any(Number),
      reason: 'no Stripe webhook endpoint points at this deployment (/api/stripe/webhook of SERVICE_URL): run npm run setup:webhooks',
    });
    expect(JSON.stringify(body)).not.toContain('old-domain');
    expect(loggedLines()).toContainEqual(expect.objectContaining({ event: 'health.check_failed', check: 'cardWebhook', reason: 'webhook_misconfigured' }));
  });

  it('reports degraded when the endpoint is disabled', async () => {
    seed({ status: 'disabled' });
    const { status, body } = await deepHealth();
    expect(status).toBe(503);
    expect(body.checks.cardWebhook.reason).toBe('the Stripe webhook endpoint for this deployment is disabled: run npm run setup:webhooks');
  });

  it('reports degraded, naming the event, when the endpoint lacks one the configuration handles', async () => {
    useTestEnv({ CRON_SECRET: TEST_CRON_SECRET, SERVICE_URL: SERVICE, STRIPE_CAPTURE: 'on_shipment' });
    seed();
    const { status, body } = await deepHealth();
    expect(status).toBe(503);
    expect(body.checks.cardWebhook.reason).toBe(
      'the Stripe webhook endpoint for this deployment lacks payment_intent.amount_capturable_updated, payment_intent.canceled: run npm run setup:webhooks',
    );
  });

  it("reports degraded when the endpoint speaks another API version than the SDK's", async () => {
    seed({ api_version: '2024-06-20' });
    const { body } = await deepHealth();
    expect(body.checks.cardWebhook.reason).toBe(
      `the Stripe webhook endpoint for this deployment speaks API version 2024-06-20, not the SDK's ${STRIPE_SDK_API_VERSION}: run npm run setup:webhooks`,
    );
  });

  it("counts an endpoint on the account's default version as another version", async () => {
    providers.stripe.webhookEndpoints.seed({ url: `${SERVICE}/api/stripe/webhook`, enabled_events: EVENTS });
    const { body } = await deepHealth();
    expect(body.checks.cardWebhook.reason).toContain("speaks the account's default API version");
  });

  it('is ok while an old endpoint is being replaced, as long as the new one is right', async () => {
    seed({ api_version: '2024-06-20' });
    seed();
    expect((await deepHealth()).body.checks.cardWebhook.ok).toBe(true);
  });

  it("knows the deployment from Vercel's production domain when SERVICE_URL is unset", async () => {
    useTestEnv({ CRON_SECRET: TEST_CRON_SECRET, VERCEL_ENV: 'production', VERCEL_PROJECT_PRODUCTION_URL: 'pay.example.test' });
    seed({ status: 'disabled' });
    expect((await deepHealth()).body.checks.cardWebhook.reason).toContain('is disabled');
  });

  it('does not check the webhook while the deployment URL is unknown (a preview, or no SERVICE_URL)', async () => {
    useTestEnv({ CRON_SECRET: TEST_CRON_SECRET, VERCEL_ENV: 'preview', VERCEL_PROJECT_PRODUCTION_URL: 'pay.example.test' });
    const { status, body } = await deepHealth();
    expect(status).toBe(200);
    expect(body.checks).not.toHaveProperty('cardWebhook');
    expect(providers.callsTo('card', 'GET', /webhook_endpoints/)).toEqual([]);
  });

  it('reports degraded when the deployment lacks the signing secret of the endpoint the setup command made', async () => {
    const endpoint = seed({ metadata: { secret_sha256: secretFingerprint('whsec_some_other_secret_0123') } });
    const { status, body } = await deepHealth();
    expect(status).toBe(503);
    expect(body.checks.cardWebhook.reason).toBe(
      `STRIPE_WEBHOOK_SECRET does not hold the signing secret of ${endpoint.id}, the endpoint for this deployment, so its deliveries are refused: set it (printed by npm run setup:webhooks, or revealed in the Stripe Dashboard) and redeploy`,
    );
    expect(JSON.stringify(body)).not.toContain(TEST_WEBHOOK_SECRET);
  });

  it('is ok when the deployment holds that secret, among others while it is rolled', async () => {
    useTestEnv({ CRON_SECRET: TEST_CRON_SECRET, SERVICE_URL: SERVICE, STRIPE_WEBHOOK_SECRET: `whsec_old_0123456789,${TEST_WEBHOOK_SECRET}` });
    seed({ metadata: { secret_sha256: secretFingerprint(TEST_WEBHOOK_SECRET) } });
    expect((await deepHealth()).body.checks.cardWebhook.ok).toBe(true);
  });

  it('says which permission a restricted key lacks when Stripe refuses the list, revealing no key', async () => {
    seed();
    providers.failCard('GET', /\/v1\/webhook_endpoints$/, 403, 'invalid_request_error', 'secret_key_required');
    const { body } = await deepHealth();
    expect(body.checks.cardWebhook).toEqual({
      ok: false,
      latencyMs: expect.any(Number),
      reason: 'Stripe refused to list the webhook endpoints: a restricted key (rk_) needs the Webhook Endpoints read permission',
    });
    expect(JSON.stringify(body)).not.toContain(TEST_STRIPE_KEY);
  });
});
