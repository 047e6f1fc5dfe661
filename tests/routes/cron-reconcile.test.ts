/**
 * GET /api/cron/reconcile-payments: events the card provider recorded are
 * applied through the webhook's own code and exactly-once guard; the Stripe
 * stand-in records them as Stripe does when a payment succeeds or fails, and
 * serves GET /v1/events with Stripe's filters and paging.
 */
import Stripe from 'stripe';
import { beforeEach, describe, expect, it } from 'vitest';
import { POST as CARD_WEBHOOK } from '@/app/api/cardprovider/webhook/route';
import { GET } from '@/app/api/cron/reconcile-payments/route';
import { worstCase } from '@/lib/cron/budget';
import type { Budget } from '@/lib/cron/budget';
import { reconcilePayments } from '@/lib/cron/reconcile-payments';
import { RECONCILE_CURSOR, RedisCursorStore } from '@/lib/shared-state/cursor';
import { getServices, resetServices } from '@/lib/services';
import type { StripeEvent } from '@/stand-ins/stripe/events';
import { TEST_CRON_SECRET, TEST_WEBHOOK_SECRET, useTestEnv } from '../support/env';
import { useProviders } from '../support/providers';
import { freshIp } from '../support/requests';
import { noRedis, REDIS_SKIP_REASON, REDIS_URL, redisConnection, testPrefix } from '../support/redis';
import { loggedLines } from '../support/setup';

const providers = useProviders();

beforeEach(() => {
  useTestEnv({ CRON_SECRET: TEST_CRON_SECRET });
  providers.reset();
});

function cronRequest(authorization: string | null = `Bearer ${TEST_CRON_SECRET}`): Request {
  const headers: Record<string, string> = { 'user-agent': 'vercel-cron/1.0' };
  if (authorization !== null) headers.authorization = authorization;
  return new Request('http://localhost:3000/api/cron/reconcile-payments', { method: 'GET', headers });
}

async function reconcile(authorization?: string | null) {
  const response = await GET(cronRequest(authorization));
  return { status: response.status, body: await response.json() };
}

/** A pending order of 10.00 and a payment intent for it, as payment-intent would have left them. */
function pendingOrderWithIntent(orderId: number, customerId = 0) {
  providers.woo.seed({ id: orderId, total: '10.00', customer_id: customerId });
  return providers.stripe.create({ amount: '1000', currency: 'usd', metadata: { shop_order_id: String(orderId) } });
}

const lastEvent = (): StripeEvent => providers.stripe.events.events.at(-1) as StripeEvent;

async function deliverToWebhook(event: StripeEvent) {
  const payload = JSON.stringify(event);
  const request = new Request('http://localhost:3000/api/cardprovider/webhook', {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-forwarded-for': freshIp(),
      'stripe-signature': Stripe.webhooks.generateTestHeaderString({ payload, secret: TEST_WEBHOOK_SECRET }),
    },
    body: payload,
  });
  return (await CARD_WEBHOOK(request)).status;
}


describe('cron protection', () => {
  it('answers 401 without the bearer token or with a wrong one, and lists nothing', async () => {
    for (const header of [null, 'Bearer wrong-secret-0123456789', TEST_CRON_SECRET, `Basic ${TEST_CRON_SECRET}`, 'Bearer ']) {
      const { status, body } = await reconcile(header);
      expect(status).toBe(401);
      expect(body).toEqual({ error: 'Unauthorized' });
    }
    expect(providers.calls).toEqual([]);
  });

  it('refuses to run at all when CRON_SECRET is unset, answering 401 whatever the request carries', async () => {
    useTestEnv({ CRON_SECRET: undefined });
    for (const header of [null, `Bearer ${TEST_CRON_SECRET}`]) {
      const { status, body } = await reconcile(header);
      // Like a wrong token: the configuration is for the operator's log, not for the caller.
      expect(status).toBe(401);
      expect(body).toEqual({ error: 'Unauthorized' });
    }
    expect(loggedLines()).toContainEqual(expect.objectContaining({ event: 'cron.secret_unset', level: 'warn' }));
    expect(providers.calls).toEqual([]);
  });
});

describe('payment reconciliation', () => {
  it('applies a succeeded payment the webhook never delivered: the order becomes processing', async () => {
    const intent = pendingOrderWithIntent(300);
    providers.stripe.succeed(intent.id);

    const { status, body } = await reconcile();

    expect(status).toBe(200);
    expect(body).toMatchObject({ checked: 1, applied: 1, skipped: 0, failed: [], complete: true, resumed: false, windowHours: 72 });
    const order = providers.woo.get(300);
    expect(order.status).toBe('processing');
    expect(order.meta_data).toEqual(expect.arrayContaining([expect.objectContaining({ key: '_provider_payment_intent_id', value: intent.id })]));
    expect(loggedLines()).toContainEqual(
      expect.objectContaining({ event: 'reconcile.event_applied', eventId: lastEvent().id, orderId: 300, outcome: 'paid' }),
    );
  });

  it('gives each event its own upstream deadline: a run longer than the 3 × UPSTREAM_TIMEOUT_MS of one request still applies every event', async () => {
    // 1 s per attempt: a request may spend 3 s upstream. Six events of two 300 ms store calls each take at least 3.6 s,
    // while each call keeps 700 ms of slack, so a busy machine cannot time one out.
    useTestEnv({ CRON_SECRET: TEST_CRON_SECRET, UPSTREAM_TIMEOUT_MS: '1000' });
    const ids = [311, 312, 313, 314, 315, 316];
    for (const id of ids) providers.stripe.succeed(pendingOrderWithIntent(id).id);
    providers.setStoreLatency(300);

    const { status, body } = await reconcile();

    expect(status).toBe(200);
    expect(body).toMatchObject({ checked: 6, applied: 6, failed: [], complete: true });
    for (const id of ids) expect(providers.woo.get(id).status).toBe('processing');
  });

  it('skips an event the webhook already applied: same event id, no second write', async () => {
    const intent = pendingOrderWithIntent(301);
    providers.stripe.succeed(intent.id);
    expect(await deliverToWebhook(lastEvent())).toBe(200);
    expect(providers.orderUpdates(301)).toHaveLength(1);

    const { body } = await reconcile();

    expect(body).toMatchObject({ checked: 1, applied: 0, skipped: 1, failed: [] });
    expect(providers.orderUpdates(301)).toHaveLength(1);
    // And the other way round: a delivery after reconciliation applied it changes nothing either.
    const later = pendingOrderWithIntent(311);
    providers.stripe.succeed(later.id);
    expect((await reconcile()).body).toMatchObject({ applied: 1, skipped: 1 });
    expect(await deliverToWebhook(lastEvent())).toBe(200);
    expect(providers.orderUpdates(311)).toHaveLength(1);
  });

  it('skips a failure the webhook already recorded, though the order is still pending: only the event id stops it', async () => {
    const intent = pendingOrderWithIntent(312);
    providers.stripe.fail(intent.id);
    expect(await deliverToWebhook(lastEvent())).toBe(200);
    expect(providers.orderUpdates(312)).toHaveLength(1);

    const { body } = await reconcile();

    expect(body).toMatchObject({ checked: 1, applied: 0, skipped: 1 });
    expect(providers.orderUpdates(312)).toHaveLength(1);
  });

  it('after a restart without Redis, the order decides: a failure the webhook applied is found by its receipt, a missed one is applied', async () => {
    const failedIntent = pendingOrderWithIntent(317, 78);
    providers.stripe.fail(failedIntent.id);
    expect(await deliverToWebhook(lastEvent())).toBe(200);
    const missedIntent = pendingOrderWithIntent(319, 79);
    providers.stripe.fail(missedIntent.id, 'Your card has insufficient funds.');
    const paidIntent = pendingOrderWithIntent(318);
    providers.stripe.succeed(paidIntent.id);
    // Every event a minute old; the process restarts: the in-process memory of applied events is empty.
    for (const event of providers.stripe.events.events) event.created -= 60;
    resetServices();
    const writesBefore = providers.orderUpdates(317).length;
    providers.woo.carts.set(78, [{ product_id: 900, quantity: 1 }]);

    const { body } = await reconcile();

    expect(body).toMatchObject({ checked: 3, applied: 2, skipped: 1, failed: [] });
    // The applied failure is not applied twice: no second note, the customer's current cart kept.
    expect(providers.orderUpdates(317)).toHaveLength(writesBefore);
    expect(providers.callsTo('store', 'POST', /\/customers\/78\/cart\/restore$/)).toHaveLength(1);
    expect(providers.woo.carts.get(78)).toEqual([{ product_id: 900, quantity: 1 }]);
    // The failure the webhook never got is recorded now, once.
    expect(providers.orderUpdates(319)).toHaveLength(1);
    expect(providers.woo.get(319).meta_data).toContainEqual(expect.objectContaining({ key: '_payment_error', value: 'Your card has insufficient funds.' }));
    expect(providers.woo.get(318).status).toBe('processing');
  });

  it('an order written before payment facts existed: a failure created before the recorded one is not applied again, a newer one is', async () => {
    // An order whose failure an earlier version recorded (failure meta, no payment facts), 30 s ago.
    providers.woo.seed({
      id: 320,
      total: '10.00',
      customer_id: 80,
      meta_data: [
        { key: '_payment_failed_at', value: new Date(Date.now() - 30_000).toISOString() },
        { key: '_payment_error', value: 'Your card was declined.' },
        { key: '_cart_restored_on_failure', value: 'yes' },
      ],
    });
    const intent = providers.stripe.create({ amount: '1000', currency: 'usd', metadata: { shop_order_id: '320' } });
    providers.stripe.fail(intent.id);
    for (const event of providers.stripe.events.events) event.created -= 60;
    resetServices();

    expect((await reconcile()).body).toMatchObject({ checked: 1, applied: 0, skipped: 1, failed: [] });
    expect(providers.orderUpdates(320)).toEqual([]);
    expect(providers.callsTo('store', 'POST', /\/cart\/restore$/)).toEqual([]);

    // The customer tries again and fails again: that failure is newer than the one recorded.
    providers.stripe.fail(intent.id);
    resetServices();
    expect((await reconcile()).body).toMatchObject({ checked: 2, applied: 1, skipped: 1 });
    expect(providers.orderUpdates(320)).toHaveLength(1);
  });

  it('applies a failed payment as the failure path: the order stays pending with the failure recorded', async () => {
    const intent = pendingOrderWithIntent(302, 77);
    providers.stripe.fail(intent.id, 'Your card has insufficient funds.');

    const { body } = await reconcile();

    expect(body).toMatchObject({ checked: 1, applied: 1, skipped: 0, failed: [] });
    const order = providers.woo.get(302);
    expect(order.status).toBe('pending');
    const keys = order.meta_data.map((m: { key: string }) => m.key);
    expect(keys).toEqual(expect.arrayContaining(['_payment_failed_at', '_payment_error', '_cart_restored_on_failure']));
    expect(order.meta_data).toContainEqual(expect.objectContaining({ key: '_payment_error', value: 'Your card has insufficient funds.' }));
    // The cart was given back, exactly as the webhook does it.
    expect(providers.callsTo('store', 'POST', /\/customers\/77\/cart\/restore$/)).toHaveLength(1);
  });

  it('goes through the same status gates: a failure for an order paid meanwhile changes nothing', async () => {
    const intent = pendingOrderWithIntent(303);
    providers.stripe.fail(intent.id);
    providers.stripe.succeed(intent.id);

    const { body } = await reconcile();

    // Newest first: the success is applied, then the older failure finds the order no longer pending.
    expect(body).toMatchObject({ checked: 2, applied: 1, skipped: 1, failed: [] });
    expect(providers.woo.get(303).status).toBe('processing');
    expect(providers.orderUpdates(303)).toHaveLength(1);
  });

  it('looks back RECONCILE_WINDOW_HOURS only, at payment results only', async () => {
    useTestEnv({ CRON_SECRET: TEST_CRON_SECRET, RECONCILE_WINDOW_HOURS: '2' });
    const intent = pendingOrderWithIntent(304);
    providers.stripe.events.record('payment_intent.succeeded', { ...intent, status: 'succeeded' }, Math.floor(Date.now() / 1000) - 3 * 3600);
    providers.stripe.events.record('payment_intent.created', intent);

    const { body } = await reconcile();

    expect(body).toMatchObject({ checked: 0, applied: 0, windowHours: 2 });
    expect(providers.woo.get(304).status).toBe('pending');
  });

  it('reports a failed event with its reason and applies it on a later run', async () => {
    const intent = pendingOrderWithIntent(305);
    providers.stripe.succeed(intent.id);
    // Both attempts of the read (it is retried once).
    providers.failStore('GET', /\/orders\/305$/, 503, 'internal_server_error', 2);

    const first = await reconcile();
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ checked: 1, applied: 0, skipped: 0, failed: [{ eventId: lastEvent().id, reason: 'store:unavailable' }] });
    expect(loggedLines()).toContainEqual(expect.objectContaining({ event: 'reconcile.event_failed', level: 'error', reason: 'store:unavailable' }));

    const second = await reconcile();
    expect(second.body).toMatchObject({ checked: 1, applied: 1, failed: [] });
    expect(providers.woo.get(305).status).toBe('processing');
  });

  it('answers 502 when the provider cannot list events, naming the operation only', async () => {
    providers.failCard('GET', /\/v1\/events$/, 500, 'api_error', 'internal', 2);
    const { status, body } = await reconcile();
    expect(status).toBe(502);
    expect(body).toEqual({ error: 'Payment provider request failed: list events' });
  });
});

describe('time bound', () => {
  // Not the default 2 s, where a page's worst case (2T + 2 s) equals an event's (3T) and the budget below could not tell them apart.
  const timeoutMs = 3000;
  beforeEach(() => {
    useTestEnv({ CRON_SECRET: TEST_CRON_SECRET, UPSTREAM_TIMEOUT_MS: String(timeoutMs) });
  });
  /** A budget with room for the pages and for `events` more events. */
  const budgetFor = (events: number): Budget => {
    let left = events;
    return { fits: (ms) => (ms === worstCase.eventPage(timeoutMs) ? true : left-- > 0) };
  };

  it('stops before the limit with a cursor, and the next run resumes after the last event it finished', async () => {
    const intents = [306, 307, 308].map((id) => pendingOrderWithIntent(id));
    for (const intent of intents) providers.stripe.succeed(intent.id);

    const first = await reconcilePayments(getServices(), budgetFor(2));
    expect(first).toMatchObject({ checked: 2, applied: 2, complete: false, resumed: false });
    // Newest first: the last two payments are applied.
    expect([306, 307, 308].map((id) => providers.woo.get(id).status)).toEqual(['pending', 'processing', 'processing']);
    expect(loggedLines()).toContainEqual(expect.objectContaining({ event: 'reconcile.stopped_for_time', checked: 2 }));

    const second = await reconcilePayments(getServices(), budgetFor(10));
    expect(second).toMatchObject({ checked: 1, applied: 1, complete: true, resumed: true });
    expect(providers.woo.get(306).status).toBe('processing');

    // The pass is complete: the cursor is gone and the next run starts from the newest event again.
    const third = await reconcilePayments(getServices(), budgetFor(10));
    expect(third).toMatchObject({ checked: 3, applied: 0, skipped: 3, complete: true, resumed: false });
  });
});

describe.skipIf(noRedis)(`time bound with the cursor in Redis${noRedis ? ` (skipped: ${REDIS_SKIP_REASON})` : ''}`, () => {
  const timeoutMs = 3000;
  const budgetFor = (events: number): Budget => {
    let left = events;
    return { fits: (ms) => (ms === worstCase.eventPage(timeoutMs) ? true : left-- > 0) };
  };

  it('a run on one instance stops with a cursor in Redis; the next run, on a new instance, resumes after it', async () => {
    const prefix = testPrefix('cron-cursor');
    const onInstance = () => useTestEnv({ CRON_SECRET: TEST_CRON_SECRET, REDIS_URL, REDIS_KEY_PREFIX: prefix, UPSTREAM_TIMEOUT_MS: String(timeoutMs) });
    onInstance();
    const intents = [316, 317, 318].map((id) => pendingOrderWithIntent(id));
    for (const intent of intents) providers.stripe.succeed(intent.id);

    expect(await reconcilePayments(getServices(), budgetFor(2))).toMatchObject({ checked: 2, applied: 2, complete: false });
    const cursor = new RedisCursorStore(redisConnection(), RECONCILE_CURSOR, prefix);
    expect(await cursor.load()).toEqual({ startingAfter: expect.stringMatching(/^evt_/), savedAt: expect.any(Number) });

    // A new instance: new connection, empty memory.
    resetServices();
    onInstance();
    expect(await reconcilePayments(getServices(), budgetFor(10))).toMatchObject({ checked: 1, applied: 1, complete: true, resumed: true });
    expect(providers.woo.get(316).status).toBe('processing');
    expect(await cursor.load()).toBeUndefined();
    resetServices();
  });
});
