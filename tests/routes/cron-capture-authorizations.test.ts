/**
 * GET /api/cron/capture-authorizations: an uncaptured authorization within
 * 168 - AUTHORIZATION_EXPIRY_HOURS hours (24 by default) of its own
 * `capture_before` is reported (the default: an error-level log line every run,
 * a private note once) or captured (AUTHORIZATION_EXPIRY_ACTION=capture),
 * whatever the age of its intent; a younger one, and one already captured, are
 * left alone; an order the shop let go, or one Radar is reviewing, is reported,
 * never charged.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { GET } from '@/app/api/cron/capture-authorizations/route';
import { POST as paymentIntentPOST } from '@/app/api/payment-intent/route';
import { deliverEvent } from '../support/card-events';
import { TEST_CRON_SECRET, useTestEnv } from '../support/env';
import { useProviders } from '../support/providers';
import { postJson, tokenFor } from '../support/requests';
import { loggedLines } from '../support/setup';

const providers = useProviders();
const HOUR = 3600;

beforeEach(() => {
  useTestEnv({ STRIPE_CAPTURE: 'on_shipment', CRON_SECRET: TEST_CRON_SECRET });
  providers.reset();
});

const lastEvent = (type: string) => providers.stripe.events.events.filter((e) => e.type === type).at(-1)!;
const captureCalls = () => providers.callsTo('card', 'POST', /\/capture$/);

/** A 30.00 order authorized `ageHours` ago, on hold for it; its intent created `intentAgeHours` ago (by default when it was authorized). */
async function authorizedOrder(orderId: number, ageHours: number, intentAgeHours = ageHours): Promise<string> {
  providers.woo.seed({ id: orderId, lines: [{ total: '30.00' }] });
  const response = await paymentIntentPOST(postJson('/api/payment-intent', { token: await tokenFor(orderId) }));
  const intentId = ((await response.json()) as { payment_intent_id: string }).payment_intent_id;
  providers.stripe.authorize(intentId);
  expect((await deliverEvent(lastEvent('payment_intent.amount_capturable_updated'))).status).toBe(200);
  providers.stripe.backdate(intentId, intentAgeHours * HOUR);
  providers.stripe.backdateAuthorization(intentId, ageHours * HOUR);
  return intentId;
}

const chargeOf = (intentId: string) => providers.stripe.charges.get(providers.stripe.retrieve(intentId).latest_charge!)!;
const useCapture = () => useTestEnv({ STRIPE_CAPTURE: 'on_shipment', CRON_SECRET: TEST_CRON_SECRET, AUTHORIZATION_EXPIRY_ACTION: 'capture' });

async function run(authorization: string | null = `Bearer ${TEST_CRON_SECRET}`) {
  const headers: Record<string, string> = authorization ? { authorization } : {};
  const response = await GET(new Request('http://localhost:3000/api/cron/capture-authorizations', { headers }));
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

const expiringLines = () => loggedLines().filter((line) => line.event === 'authorization.expiring');

describe('capture-authorizations', () => {
  it('answers 401 without the bearer token and touches nothing', async () => {
    await authorizedOrder(3301, 150);
    expect((await run(null)).status).toBe(401);
    expect(providers.callsTo('card', 'GET', /^\/v1\/charges$/)).toHaveLength(0);
  });

  it('report (the default): an error line on every run, a private note once, nothing captured', async () => {
    const intentId = await authorizedOrder(3302, 150);
    await authorizedOrder(3303, 100); // younger than 144 hours: not yet

    expect((await run()).body).toMatchObject({ action: 'report', ageHours: 144, checked: 1, captured: 0, reported: 1, failed: [], complete: true });
    expect((await run()).body).toMatchObject({ checked: 1, reported: 1 });

    expect(captureCalls()).toHaveLength(0);
    expect(expiringLines()).toEqual([
      expect.objectContaining({ level: 'error', orderId: 3302, intentId, ageHours: 150 }),
      expect.objectContaining({ level: 'error', orderId: 3302, intentId, ageHours: 150 }),
    ]);
    expect(providers.woo.listNotes(3302)).toEqual([
      expect.objectContaining({ customer_note: false, note: expect.stringContaining(`authorization ${intentId} (30.00 USD) is 150 hours old`) }),
    ]);
    expect(providers.woo.listNotes(3303)).toEqual([]);
  });

  it('capture: captures the old authorization for the order; the succeeded event then records the payment', async () => {
    useTestEnv({ STRIPE_CAPTURE: 'on_shipment', CRON_SECRET: TEST_CRON_SECRET, AUTHORIZATION_EXPIRY_ACTION: 'capture', AUTHORIZATION_EXPIRY_HOURS: '120' });
    const intentId = await authorizedOrder(3304, 130);

    expect((await run()).body).toMatchObject({ action: 'capture', ageHours: 120, checked: 1, captured: 1, reported: 0, complete: true });
    expect(providers.stripe.retrieve(intentId)).toMatchObject({ status: 'succeeded', amount_received: 3000 });
    expect((await deliverEvent(lastEvent('payment_intent.succeeded'))).status).toBe(200);
    expect(providers.woo.get(3304)).toMatchObject({ status: 'processing', transaction_id: expect.stringMatching(/^ch_/) });

    // Captured: the next run finds nothing left to do.
    expect((await run()).body).toMatchObject({ checked: 0, captured: 0 });
    expect(captureCalls()).toHaveLength(1);
  });

  it('capture: an order the shop cancelled meanwhile is reported, never charged', async () => {
    useTestEnv({ STRIPE_CAPTURE: 'on_shipment', CRON_SECRET: TEST_CRON_SECRET, AUTHORIZATION_EXPIRY_ACTION: 'capture' });
    await authorizedOrder(3305, 150);
    providers.woo.orders.get(3305)!.status = 'cancelled';

    expect((await run()).body).toMatchObject({ checked: 1, captured: 0, reported: 1 });
    expect(captureCalls()).toHaveLength(0);
    expect(expiringLines()).toEqual([expect.objectContaining({ level: 'error', orderId: 3305, why: 'order_not_waiting' })]);
  });

  it('checks only authorizations still held, among all the charges Stripe lists', async () => {
    for (let i = 0; i < 3; i += 1) await authorizedOrder(3310 + i, 150);
    // Paid at once (automatic capture) in the same window: listed by Stripe, not an authorization.
    providers.woo.seed({ id: 3313, lines: [{ total: '30.00' }] });
    const paid = providers.stripe.create({ amount: '3000', currency: 'usd', metadata: { shop_order_id: '3313' } });
    providers.stripe.succeed(paid.id);
    providers.stripe.backdateAuthorization(paid.id, 150 * HOUR);
    // Released by the shop: its charge is listed, refunded.
    const released = await authorizedOrder(3314, 150);
    providers.stripe.cancel(released, {});

    expect((await run()).body).toMatchObject({ checked: 3, reported: 3, complete: true });
    expect(providers.callsTo('card', 'GET', /^\/v1\/charges$/)).toHaveLength(1);
  });

  it('capture refused (the total rose above the authorization): one error line a run, and the note for the shop', async () => {
    useTestEnv({ STRIPE_CAPTURE: 'on_shipment', CRON_SECRET: TEST_CRON_SECRET, AUTHORIZATION_EXPIRY_ACTION: 'capture' });
    const intentId = await authorizedOrder(3325, 150);
    const order = providers.woo.orders.get(3325)!;
    order.line_items[0]!.total = '40.00';
    order.total = '40.00';

    expect((await run()).body).toMatchObject({ checked: 1, captured: 0, reported: 1, failed: [expect.objectContaining({ orderId: 3325 })] });
    expect(captureCalls()).toHaveLength(0);
    expect(expiringLines()).toEqual([expect.objectContaining({ level: 'error', orderId: 3325, intentId, why: expect.stringMatching(/^refused:/) })]);
    expect(providers.woo.listNotes(3325)).toEqual([expect.objectContaining({ customer_note: false })]);
  });

  it('reads shop_order_id as the webhook does: a hex or exponent form names no order', async () => {
    useTestEnv({ STRIPE_CAPTURE: 'on_shipment', CRON_SECRET: TEST_CRON_SECRET, AUTHORIZATION_EXPIRY_ACTION: 'capture' });
    await authorizedOrder(3320, 150);
    // Set by another integration on the same Stripe account: Number() reads 3320 from both.
    for (const form of ['0xCF8', '3.32e3']) {
      const other = providers.stripe.create({ amount: '3000', currency: 'usd', metadata: { shop_order_id: form } });
      providers.stripe.authorize(other.id);
      providers.stripe.backdateAuthorization(other.id, 150 * HOUR);
    }

    expect((await run()).body).toMatchObject({ checked: 1, captured: 1, reported: 0, failed: [], complete: true });
    expect(captureCalls()).toHaveLength(1);
    expect(expiringLines()).toEqual([]);
  });

  it('judges each authorization by its own capture_before: a young one lapsing within the day is due, an old-looking one with days left is not', async () => {
    useCapture();
    const young = await authorizedOrder(3330, 48);
    // A shorter window (Visa's merchant-initiated authorizations last 4 days 18 hours): Stripe's deadline decides.
    chargeOf(young).capture_before = Math.floor(Date.now() / 1000) + 10 * HOUR;

    expect((await run()).body).toMatchObject({ checked: 1, captured: 1, reported: 0, complete: true });
    expect(providers.stripe.retrieve(young).status).toBe('succeeded');
  });

  it('a Radar review open at Stripe (its event not applied yet): not captured, reported with the reason', async () => {
    useCapture();
    const intentId = await authorizedOrder(3331, 150);
    providers.stripe.openReview(intentId);

    expect((await run()).body).toMatchObject({ checked: 1, captured: 0, reported: 1, failed: [expect.objectContaining({ orderId: 3331, reason: 'refused:review_open' })] });
    expect(captureCalls()).toHaveLength(0);
    expect(providers.stripe.retrieve(intentId).status).toBe('requires_capture');
    expect(expiringLines()).toEqual([expect.objectContaining({ orderId: 3331, why: 'refused:review_open' })]);
  });

  it('an order moved to the authorized status (companion plugin, on_shipment) is captured like one on hold', async () => {
    useCapture();
    const intentId = await authorizedOrder(3332, 150);
    providers.woo.orders.get(3332)!.status = 'authorized';

    expect((await run()).body).toMatchObject({ checked: 1, captured: 1 });
    expect(providers.stripe.retrieve(intentId).status).toBe('succeeded');
  });

  it('is refused unless AUTHORIZATION_EXPIRY_ACTION and AUTHORIZATION_EXPIRY_HOURS are valid', async () => {
    const { parseConfig } = await import('@/lib/config');
    expect(() => parseConfig({ AUTHORIZATION_EXPIRY_ACTION: 'lapse' })).toThrow(/AUTHORIZATION_EXPIRY_ACTION must be report or capture/);
    expect(() => parseConfig({ AUTHORIZATION_EXPIRY_HOURS: '168' })).toThrow(/AUTHORIZATION_EXPIRY_HOURS must be a whole number of hours from 1 to 167/);
  });
});

describe('expiry is judged by the authorization, whatever the age of its intent', () => {
  it('an authorization made 6.5 days ago on an intent created 13.5 days ago is found and reported', async () => {
    const intentId = await authorizedOrder(3340, 156, 324);

    expect((await run()).body).toMatchObject({ action: 'report', checked: 1, captured: 0, reported: 1, failed: [], complete: true });
    expect(expiringLines()).toEqual([expect.objectContaining({ level: 'error', orderId: 3340, intentId, ageHours: 156 })]);
    expect(providers.woo.listNotes(3340)).toEqual([expect.objectContaining({ note: expect.stringContaining(`authorization ${intentId} (30.00 USD) is 156 hours old`) })]);
  });

  it('with AUTHORIZATION_EXPIRY_ACTION=capture it is captured before it lapses', async () => {
    useCapture();
    const intentId = await authorizedOrder(3341, 156, 324);

    expect((await run()).body).toMatchObject({ action: 'capture', checked: 1, captured: 1, reported: 0, complete: true });
    expect(providers.stripe.retrieve(intentId)).toMatchObject({ status: 'succeeded', amount_received: 3000 });
  });
});
