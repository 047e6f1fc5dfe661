/**
 * npm run setup:webhooks against the stand-ins: Stripe's webhook endpoints API and ShipStation's
 * webhook APIs, with the deployment's own card webhook route answering the secret probe.
 */
import { http, HttpResponse } from 'msw';
import { setupServer } from 'msw/node';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { POST as cardWebhook } from '@/app/api/stripe/webhook/route';
import { parseConfig } from '@/lib/config';
import { STRIPE_SDK_API_VERSION, stripeWebhookEvents } from '@/lib/webhooks/setup/events';
import { parseServiceUrl, runWebhookSetup } from '@/scripts/webhook-setup';
import { ShipStationWebhookSubscriptions, shipStationSubscriptionsFetchHandler } from '@/stand-ins/shipstation/webhook-subscriptions';
import { stripeApiHandler } from '@/stand-ins/stripe/fetch-handler';
import { StripeModel } from '@/stand-ins/stripe/model';
import { TEST_STRIPE_KEY, TEST_WEBHOOK_SECRET, useTestEnv } from '../support/env';
import { loggedLines } from '../support/setup';

const SERVICE = 'https://pay.example.test';
const TARGET = `${SERVICE}/api/stripe/webhook`;
const SS_KEY = 'ss-key-0123';
const SS_SECRET = 'ss-secret-4567';
const SS_V2_KEY = 'ss-v2-key-89ab';
const SHIPPING_SECRET = 'shipping-secret-0123456789';

let stripe = new StripeModel();
let shipStation = new ShipStationWebhookSubscriptions();
const probes: { status: number }[] = [];
/** Every write sent to Stripe: a run that finds everything right sends none. */
const stripeWrites: string[] = [];

const server = setupServer(
  http.all('https://api.stripe.com/*', ({ request }) => {
    if (request.method !== 'GET') stripeWrites.push(`${request.method} ${new URL(request.url).pathname}`);
    return stripeApiHandler(stripe, TEST_STRIPE_KEY)(request);
  }),
  http.all('https://ssapi.shipstation.com/*', ({ request }) =>
    shipStationSubscriptionsFetchHandler(shipStation, { v1: { apiKey: SS_KEY, apiSecret: SS_SECRET } })(request),
  ),
  http.all('https://api.shipstation.com/*', ({ request }) => shipStationSubscriptionsFetchHandler(shipStation, { v2ApiKey: SS_V2_KEY })(request)),
  // The deployment: its real card webhook route, under whatever STRIPE_WEBHOOK_SECRET the test deploys.
  http.post(`${SERVICE}/api/stripe/webhook`, async ({ request }) => {
    const answer = await cardWebhook(request);
    probes.push({ status: answer.status });
    return answer;
  }),
);
beforeAll(() => server.listen({ onUnhandledRequest: 'error' }));
afterAll(() => server.close());

beforeEach(() => {
  stripe = new StripeModel();
  shipStation = new ShipStationWebhookSubscriptions();
  probes.length = 0;
  stripeWrites.length = 0;
  useTestEnv();
});
afterEach(() => server.resetHandlers());

/** The configuration the command runs with (the operator's environment), apart from the deployment's. */
function localConfig(overrides: Record<string, string | undefined> = {}) {
  return parseConfig({
    NODE_ENV: 'test',
    STRIPE_SECRET_KEY: TEST_STRIPE_KEY,
    STRIPE_WEBHOOK_SECRET: TEST_WEBHOOK_SECRET,
    ...overrides,
  });
}

async function setup(overrides: Record<string, string | undefined> = {}, v2 = false) {
  const lines: string[] = [];
  const ok = await runWebhookSetup({
    serviceUrl: SERVICE,
    config: localConfig(v2 ? { SHIPSTATION_V2_API_KEY: SS_V2_KEY, ...overrides } : overrides),
    print: (line) => lines.push(line),
  });
  return { ok, lines, text: lines.join('\n') };
}

const endpoints = () => stripe.webhookEndpoints.all();
const SPEC_EVENTS = stripeWebhookEvents({ lifecycleEvents: new Set(), capture: 'automatic' });

describe('the Stripe webhook endpoint', () => {
  it('creates the endpoint with exactly the handled events and the SDK API version, and prints its secret once with where to put it', async () => {
    const { ok, text, lines } = await setup({ CARD_LIFECYCLE_EVENTS: 'refunds', STRIPE_CAPTURE: 'manual' });
    expect(ok).toBe(true);
    const [endpoint] = endpoints();
    expect(endpoints()).toHaveLength(1);
    expect(endpoint).toMatchObject({ url: TARGET, api_version: STRIPE_SDK_API_VERSION, status: 'enabled' });
    expect([...endpoint!.enabled_events].sort()).toEqual(
      stripeWebhookEvents({ lifecycleEvents: new Set(['refunds']), capture: 'manual' }),
    );
    expect(endpoint!.enabled_events).toContain('payment_intent.amount_capturable_updated');
    const secret = stripe.webhookEndpoints.secretOf(endpoint!.id)!;
    expect(lines.filter((line) => line.includes(secret))).toHaveLength(1);
    expect(text).toContain('STRIPE_WEBHOOK_SECRET');
    expect(JSON.stringify(loggedLines())).not.toContain(secret);
  });

  it('still prints the new secret when its digest cannot be recorded on the endpoint', async () => {
    server.use(
      http.post('https://api.stripe.com/v1/webhook_endpoints/:id', () =>
        HttpResponse.json({ error: { type: 'invalid_request_error', message: 'refused' } }, { status: 400 }),
      ),
    );
    const { ok, text } = await setup();
    const [endpoint] = endpoints();
    expect(ok).toBe(true);
    expect(text).toContain(stripe.webhookEndpoints.secretOf(endpoint!.id)!);
    expect(text).toContain(`could not record the secret's digest on ${endpoint!.id}`);
  });

  it('changes nothing when run again: up to date', async () => {
    await setup();
    const before = endpoints();
    stripeWrites.length = 0;
    const { ok, text } = await setup();
    expect(stripeWrites).toEqual([]);
    expect(ok).toBe(true);
    expect(text).toContain('up to date');
    expect(text).not.toMatch(/whsec_/);
    expect(endpoints()).toEqual(before);
  });

  it('adds an event the configuration handles and the endpoint lacks, keeping its secret', async () => {
    const seeded = stripe.webhookEndpoints.seed({ url: TARGET, enabled_events: ['payment_intent.succeeded'], api_version: STRIPE_SDK_API_VERSION });
    const { text } = await setup();
    expect(endpoints()).toHaveLength(1);
    expect([...endpoints()[0]!.enabled_events].sort()).toEqual(SPEC_EVENTS);
    expect(text).toContain('adding payment_intent.payment_failed');
    expect(stripe.webhookEndpoints.secretOf(seeded.id)).toBe(seeded.secret);
    expect(text).not.toContain('whsec_');
  });

  it('points an endpoint of this deployment at the webhook path when its url is wrong', async () => {
    stripe.webhookEndpoints.seed({ url: `${SERVICE}/api/stripe/webhooks`, enabled_events: SPEC_EVENTS, api_version: STRIPE_SDK_API_VERSION });
    const { text } = await setup();
    expect(endpoints().map((e) => e.url)).toEqual([TARGET]);
    expect(text).toContain('url set to /api/stripe/webhook');
  });

  it('leaves an endpoint on another host alone and says so', async () => {
    const other = stripe.webhookEndpoints.seed({ url: 'https://old.example.test/api/stripe/webhook', enabled_events: SPEC_EVENTS, api_version: STRIPE_SDK_API_VERSION });
    const { text } = await setup();
    expect(endpoints().find((e) => e.id === other.id)).toMatchObject({ url: 'https://old.example.test/api/stripe/webhook', status: 'enabled' });
    expect(endpoints().filter((e) => e.url === TARGET)).toHaveLength(1);
    expect(text).toContain(`${other.id} points at another host (old.example.test)`);
  });

  it('re-enables a disabled endpoint', async () => {
    stripe.webhookEndpoints.seed({ url: TARGET, enabled_events: SPEC_EVENTS, api_version: STRIPE_SDK_API_VERSION, status: 'disabled' });
    const { text } = await setup();
    expect(endpoints()[0]).toMatchObject({ status: 'enabled' });
    expect(text).toContain('enabled (it was disabled)');
  });

  it('replaces an endpoint on another API version with a new one, and removes the old one only once the deployment accepts the new secret', async () => {
    const old = stripe.webhookEndpoints.seed({ url: TARGET, enabled_events: SPEC_EVENTS, api_version: '2024-06-20' });
    // The deployment holds the old endpoint's secret only.
    useTestEnv({ STRIPE_WEBHOOK_SECRET: old.secret });

    const first = await setup({ STRIPE_WEBHOOK_SECRET: old.secret });
    const created = endpoints().find((e) => e.id !== old.id)!;
    expect(created).toMatchObject({ url: TARGET, api_version: STRIPE_SDK_API_VERSION, status: 'enabled' });
    const secret = stripe.webhookEndpoints.secretOf(created.id)!;
    expect(first.lines.filter((line) => line.includes(secret))).toHaveLength(1);
    expect(first.text).toContain('STRIPE_WEBHOOK_SECRET=<old secret>,<new secret>');
    expect(endpoints().map((e) => e.id)).toContain(old.id);

    // Run again before anything is deployed: the old endpoint stays, the secret is not printed again.
    const early = await setup({ STRIPE_WEBHOOK_SECRET: old.secret });
    expect(early.text).not.toContain(secret);
    expect(early.text).toContain(`old endpoint ${old.id} kept: STRIPE_WEBHOOK_SECRET here does not hold`);
    expect(endpoints().map((e) => e.id)).toContain(old.id);

    // The operator holds both secrets, but the deployment still has the old one only: it refuses the probe.
    const undeployed = await setup({ STRIPE_WEBHOOK_SECRET: `${old.secret},${secret}` });
    expect(probes.at(-1)).toEqual({ status: 400 });
    expect(undeployed.text).toContain(`old endpoint ${old.id} kept: the deployment refused a delivery signed with ${created.id}'s secret`);
    expect(endpoints().map((e) => e.id)).toContain(old.id);

    // Deployed: the deployment accepts the new secret, and the old endpoint goes.
    useTestEnv({ STRIPE_WEBHOOK_SECRET: `${old.secret},${secret}` });
    const done = await setup({ STRIPE_WEBHOOK_SECRET: `${old.secret},${secret}` });
    expect(probes.at(-1)).toEqual({ status: 200 });
    expect(done.text).toContain(`removed ${old.id}`);
    expect(endpoints().map((e) => e.id)).toEqual([created.id]);
    const everything = [early.text, undeployed.text, done.text, JSON.stringify(loggedLines())].join('\n');
    expect(everything).not.toContain(secret);
    expect(everything).not.toContain(old.secret);
  });

  it('reads every page of endpoints before deciding', async () => {
    // The deployment's endpoint is the oldest of 121: Stripe lists newest first, 100 a page, so it is on the second page.
    stripe.webhookEndpoints.seed({ url: TARGET, enabled_events: SPEC_EVENTS, api_version: STRIPE_SDK_API_VERSION });
    for (let i = 0; i < 120; i += 1) {
      stripe.webhookEndpoints.seed({ url: `https://shop${i}.example.test/hooks`, enabled_events: ['charge.succeeded'] });
    }
    const { text } = await setup();
    expect(text).toContain('up to date');
    expect(endpoints().filter((e) => e.url === TARGET)).toHaveLength(1);
  });

  it('fails with Stripe\'s code and no secret or message when Stripe refuses', async () => {
    const { ok, text } = await setup({ STRIPE_SECRET_KEY: 'sk_test_wrong_key_0000' });
    expect(ok).toBe(false);
    expect(text).toContain('Stripe: failed (list webhook endpoints: StripeAuthenticationError 401 api_key_invalid)');
    expect(text).not.toContain('sk_test_wrong');
  });
});

describe('ShipStation webhooks', () => {
  const shipStationEnv = { SHIPSTATION_API_KEY: SS_KEY, SHIPSTATION_API_SECRET: SS_SECRET, SHIPPING_WEBHOOK_SECRET: SHIPPING_SECRET };

  it('subscribes V1 SHIP_NOTIFY with the shipping secret in the URL, once, without printing the secret', async () => {
    const first = await setup(shipStationEnv);
    expect(first.ok).toBe(true);
    expect([...shipStation.v1.values()].map((hook) => [hook.HookType, hook.Url])).toEqual([
      ['SHIP_NOTIFY', `${SERVICE}/api/shipstation/webhook?secret=${SHIPPING_SECRET}`],
    ]);
    expect(first.text).not.toContain(SHIPPING_SECRET);
    const second = await setup(shipStationEnv);
    expect(shipStation.v1.size).toBe(1);
    expect(second.text).toMatch(/ShipStation V1:\n {2}up to date/);
  });

  it('keeps a V1 subscription carrying any configured secret, and replaces one whose secret was rotated out', async () => {
    shipStation.seedV1({ HookType: 'ITEM_SHIP_NOTIFY', Url: `${SERVICE}/api/shipstation/webhook?secret=old-secret-0123456789` });
    await setup({ ...shipStationEnv, SHIPPING_WEBHOOK_SECRET: `${SHIPPING_SECRET},old-secret-0123456789` });
    expect(shipStation.v1.size).toBe(1);
    const rotated = await setup(shipStationEnv);
    expect([...shipStation.v1.values()].map((hook) => hook.Url)).toEqual([`${SERVICE}/api/shipstation/webhook?secret=${SHIPPING_SECRET}`]);
    expect(rotated.text).toContain('unsubscribed webhook');
    expect(rotated.text).not.toContain('old-secret-0123456789');
  });

  it('creates the V2 environment webhooks for shipped fulfillments, labels and tracking, once', async () => {
    shipStation.seedV2({ url: `${SERVICE}/old-path`, event: 'track_event_v2' });
    const first = await setup({}, true);
    expect(first.ok).toBe(true);
    const hooks = () => [...shipStation.v2.values()].map((hook) => [hook.event, hook.url]).sort();
    expect(hooks()).toEqual([
      ['fulfillment_shipped_v2', `${SERVICE}/api/shipstation/webhook`],
      ['label_created_v2', `${SERVICE}/api/shipstation/webhook`],
      ['track_event_v2', `${SERVICE}/api/shipstation/webhook`],
    ]);
    const second = await setup({}, true);
    expect(second.text).toMatch(/ShipStation V2:\n {2}up to date/);
    expect(hooks()).toHaveLength(3);
  });

  it('skips a ShipStation API whose credentials are not set', async () => {
    const { text } = await setup();
    expect(text).toContain('ShipStation V1: skipped');
    expect(text).toContain('ShipStation V2: skipped');
  });
});

describe('--url', () => {
  it('takes an https base URL, and refuses a route, a query or plain http to another host', () => {
    expect(parseServiceUrl('https://pay.example.com/')).toEqual({ url: 'https://pay.example.com' });
    expect(parseServiceUrl('http://localhost:3000')).toEqual({ url: 'http://localhost:3000' });
    for (const bad of [undefined, 'pay.example.com', 'http://pay.example.com', 'https://pay.example.com/api/stripe/webhook', 'https://pay.example.com?x=1']) {
      expect(parseServiceUrl(bad)).toHaveProperty('problem');
    }
  });
});
