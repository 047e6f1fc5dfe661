/**
 * The card webhook under store and Redis faults (docs/decisions.md#d12): a payment
 * fact is applied exactly once whatever goes wrong between the service and
 * the store, followed by the provider's redelivery or by reconciliation.
 *
 * - Each store fault (tests/support/store-faults.ts) on the order write,
 *   before the store committed it and after (the write landed, the answer
 *   was lost or replaced), for a successful and a failed payment: one paid
 *   status, one failure note, the cart restored at most once and never over
 *   what the customer put in it after that restore.
 * - The same with Redis stopped in the middle of the request, restarted
 *   empty before the redelivery, and with two instances while Redis is down.
 *
 * "Applied" is counted at the store: the order writes the stand-in took
 * (every PUT sent, less those a fault stopped before the store committed).
 */
import { http } from 'msw';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { GET as reconcileRoute } from '@/app/api/cron/reconcile-payments/route';
import { ServiceError } from '@/lib/errors';
import { getConfig } from '@/lib/config';
import type { RedisConnection } from '@/lib/redis/connection';
import { orderLocksWithoutFallback } from '@/lib/shared-state/order-locks';
import { orderLockTtlMs, RedisOrderLocks } from '@/lib/shared-state/order-locks';
import { RedisProcessedEvents } from '@/lib/shared-state/processed-events';
import { MemoryOrderLocks } from '@/lib/shared-state/order-locks';
import { getServices, resetServices, type Services } from '@/lib/services';
import { WooCommerceStore } from '@/lib/store/woocommerce';
import { withRequestDeadline, REQUEST_BUDGET_TIMEOUTS } from '@/lib/upstream/budget';
import { handleCardWebhook } from '@/lib/webhooks/card/handle-event';
import type { StripeEvent } from '@/stand-ins/stripe/events';
import { signCardEvent } from '@/stand-ins/webhook-deliveries';
import { deliverEvent, paidOrder } from '../support/card-events';
import { TEST_CONSUMER_KEY, TEST_CONSUMER_SECRET, TEST_CRON_SECRET, TEST_STORE_URL, TEST_WEBHOOK_SECRET, useTestEnv } from '../support/env';
import { createProviders } from '../support/providers';
import {
  eventually,
  listening,
  noRedis,
  noRedisServerBinary,
  redisConnection,
  startDisposableRedis,
  testPrefix,
  type DisposableRedis,
} from '../support/redis';
import { STORE_FAULT_KINDS, type StoreFaultCommit, type StoreFaultKind } from '../support/store-faults';

const { providers, server: msw } = createProviders();
beforeAll(() => msw.listen({ onUnhandledRequest: 'error' }));
afterEach(() => {
  providers.storeFaults.clear();
  msw.resetHandlers();
});
afterAll(() => msw.close());

/**
 * A hang costs one UPSTREAM_TIMEOUT_MS: short for those, generous for the rest, so a loaded machine
 * never turns a slow answer into a fault the test did not inject.
 */
const HANG_TIMEOUT_MS = 1_000;
const TIMEOUT_MS = 3_000;
const ORDER_WRITE = /\/wc\/v3\/orders\/\d+$/;
const envFor = (kind?: StoreFaultKind) => ({
  UPSTREAM_TIMEOUT_MS: String(kind === 'hang' ? HANG_TIMEOUT_MS : TIMEOUT_MS),
  CRON_SECRET: TEST_CRON_SECRET,
});

beforeEach(() => {
  useTestEnv(envFor());
  providers.reset();
});

type Fact = 'success' | 'failure';
type Followup = 'redelivery' | 'reconciliation';

const ORDER_ITEMS = [{ product_id: 500, quantity: 1 }];
const CUSTOMERS_EDIT = [{ product_id: 901, quantity: 2 }];
let nextOrderId = 7000;

interface Scenario {
  orderId: number;
  customerId: number;
  event: StripeEvent;
}

/** A registered customer's pending order of 10.00 with an intent, paid or declined at Stripe. */
function paymentOf(fact: Fact): Scenario {
  nextOrderId += 1;
  const orderId = nextOrderId;
  const customerId = orderId + 10_000;
  providers.woo.seed({ id: orderId, customer_id: customerId, lines: [{ total: '10.00' }] });
  providers.woo.carts.set(customerId, [{ product_id: 800, quantity: 1 }]);
  const intent = providers.stripe.create({ amount: '1000', currency: 'usd', metadata: { shop_order_id: String(orderId) } });
  if (fact === 'success') providers.stripe.succeed(intent.id);
  else providers.stripe.fail(intent.id, 'Your card was declined.');
  return { orderId, customerId, event: providers.stripe.events.events.at(-1) as StripeEvent };
}

/** Order writes the store took: every PUT sent, less those a fault stopped before the store committed them. */
function appliedOrderWrites(orderId: number): number {
  const path = `/wp-json/wc/v3/orders/${orderId}`;
  const sent = providers.callsTo('store', 'PUT').filter((call) => call.path === path).length;
  const stopped = providers.storeFaults.fired.filter((f) => f.method === 'PUT' && f.path === path && (f.commit === 'before' || f.kind === 'refused')).length;
  return sent - stopped;
}

async function reconcile(): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await reconcileRoute(
    new Request('http://localhost:3000/api/cron/reconcile-payments', { headers: { authorization: `Bearer ${TEST_CRON_SECRET}` } }),
  );
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

/** The redelivery, or a reconciliation run; `applied` is whether this follow-up should find the fact still to apply. */
async function followUp(how: Followup, event: StripeEvent, applies: boolean): Promise<void> {
  if (how === 'redelivery') {
    expect((await deliverEvent(event)).status).toBe(200);
  } else {
    const { status, body } = await reconcile();
    expect(status, JSON.stringify(body)).toBe(200);
    expect(body, JSON.stringify(body)).toMatchObject({ checked: 1, applied: applies ? 1 : 0, failed: [] });
  }
}

/** The first delivery as it was left: the cart restored after a failure; then the customer edits it. */
function customerEditsCart(scenario: Scenario): void {
  providers.woo.carts.set(scenario.customerId, CUSTOMERS_EDIT);
}

/** Exactly one application of the fact, and the cart as the customer left it after that one restore. */
function expectAppliedOnce(fact: Fact, { orderId, customerId, event }: Scenario): void {
  const order = providers.woo.get(orderId);
  expect(appliedOrderWrites(orderId)).toBe(1);
  const facts = order.meta_data.filter((m: { key: string }) => m.key === '_cardprovider_payment').map((m: { value: unknown }) => JSON.parse(String(m.value)));
  expect(facts).toHaveLength(1);
  if (fact === 'success') expect(facts[0].paid).toMatchObject({ intentId: event.data.object.id });
  else expect(facts[0].attempt).toMatchObject({ kind: 'failed', at: event.created });
  if (fact === 'success') {
    expect(order.status).toBe('processing');
    expect(order.transaction_id).toBeTruthy();
    return;
  }
  expect(order.status).toBe('pending');
  expect(order.customer_note).toBe('Your payment could not be completed: Your card was declined. Your cart has been restored so you can try again.');
  // Restored once, for this failure; the customer's later edit is what the cart holds.
  expect([...(providers.woo.cartRestoreKeys.get(customerId)?.keys() ?? [])]).toEqual([event.id]);
  expect(providers.woo.carts.get(customerId)).toEqual(CUSTOMERS_EDIT);
}

const COMMITS = (kind: StoreFaultKind): StoreFaultCommit[] => (kind === 'refused' ? ['before'] : ['before', 'after']);

describe('store faults on the order write, then the redelivery or reconciliation: applied once', () => {
  for (const fact of ['success', 'failure'] as const) {
    for (const kind of STORE_FAULT_KINDS) {
      for (const commit of COMMITS(kind)) {
        for (const followup of ['redelivery', 'reconciliation'] as const) {
          it(`${fact}: ${kind}, ${commit} commit, then ${followup}`, async () => {
            useTestEnv(envFor(kind));
            const scenario = paymentOf(fact);
            providers.storeFaults.inject({ kind, method: 'PUT', path: ORDER_WRITE, commit });

            expect((await deliverEvent(scenario.event)).status).toBe(400);
            expect(providers.storeFaults.fired).toHaveLength(1);
            if (fact === 'failure') expect(providers.woo.carts.get(scenario.customerId)).toEqual(ORDER_ITEMS);
            customerEditsCart(scenario);

            await followUp(followup, scenario.event, commit === 'before');
            // And once more, as Stripe may: nothing changes.
            expect((await deliverEvent(scenario.event)).status).toBe(200);
            expectAppliedOnce(fact, scenario);
          });
        }
      }
    }
  }

  it('failure: a lost answer from the cart restore, then the redelivery: the cart restored once, the note says it was not', async () => {
    const scenario = paymentOf('failure');
    providers.storeFaults.inject({ kind: 'reset', method: 'POST', path: /\/cart\/restore$/, commit: 'after' });
    providers.storeFaults.inject({ kind: 'status_502', method: 'PUT', path: ORDER_WRITE });
    expect((await deliverEvent(scenario.event)).status).toBe(400);
    customerEditsCart(scenario);
    expect((await deliverEvent(scenario.event)).status).toBe(200);
    // The retry's keyed restore was answered `replayed`: the cart kept, and now the note can say it came back.
    expectAppliedOnce('failure', scenario);
  });

  it('success: the store hangs on the write past the timeout and commits it; the redelivery finds the order paid and clears no cart', async () => {
    useTestEnv(envFor('hang'));
    const scenario = paymentOf('success');
    providers.storeFaults.inject({ kind: 'hang', method: 'PUT', path: ORDER_WRITE, commit: 'after' });
    expect((await deliverEvent(scenario.event)).status).toBe(400);
    customerEditsCart(scenario);
    expect((await deliverEvent(scenario.event)).status).toBe(200);
    expectAppliedOnce('success', scenario);
    // The cart is cleared only by the delivery that wrote the payment: what the customer added since stays.
    expect(providers.callsTo('store', 'DELETE', /\/cart$/)).toEqual([]);
    expect(providers.woo.carts.get(scenario.customerId)).toEqual(CUSTOMERS_EDIT);
  });

  it('a mismatched amount: the on-hold write lands but its answer is lost, the redelivery writes nothing', async () => {
    nextOrderId += 1;
    const orderId = nextOrderId;
    providers.woo.seed({ id: orderId, lines: [{ total: '10.00' }] });
    const intent = providers.stripe.create({ amount: '999', currency: 'usd', metadata: { shop_order_id: String(orderId) } });
    providers.stripe.succeed(intent.id);
    const event = providers.stripe.events.events.at(-1) as StripeEvent;
    providers.storeFaults.inject({ kind: 'html_200', method: 'PUT', path: ORDER_WRITE, commit: 'after' });

    expect((await deliverEvent(event)).status).toBe(400);
    expect((await deliverEvent(event)).status).toBe(200);
    expect((await reconcile()).body).toMatchObject({ applied: 0, failed: [] });

    expect(appliedOrderWrites(orderId)).toBe(1);
    expect(providers.woo.get(orderId).status).toBe('on-hold');
  });
});

describe.skipIf(noRedis || noRedisServerBinary)('with Redis: stopped mid-request, restarted empty, two instances while it is down', () => {
  const useRedis = (url: string, kind?: StoreFaultKind) =>
    useTestEnv({ ...envFor(kind), REDIS_URL: url, REDIS_KEY_PREFIX: testPrefix('fault-matrix') });
  afterEach(() => resetServices());

  // One disposable server for the block, stopped and restarted (empty) by the tests; each test keeps its own keys.
  let redis: DisposableRedis;
  beforeAll(async () => {
    redis = await startDisposableRedis();
  });
  beforeEach(async () => {
    // Every test leaves it running; one that failed half-way may not have.
    if (!(await listening(redis.port))) await redis.restart();
  });

  /** Stops Redis once the service sends the order write: it holds the order's lock and has checked its memory. */
  function stopRedisOnOrderWrite(stop: () => Promise<void>): void {
    msw.use(
      http.put(`${TEST_STORE_URL}/wp-json/wc/v3/orders/:id`, async () => {
        await stop();
        // Nothing returned: the write goes on to the store stand-in (and its faults).
      }, { once: true }),
    );
  }

  const FAULTS_AFTER_COMMIT = [undefined, ...STORE_FAULT_KINDS.filter((kind) => kind !== 'refused')] as const;

  for (const fact of ['success', 'failure'] as const) {
    for (const kind of FAULTS_AFTER_COMMIT) {
      const fault = kind ? `${kind} after commit` : 'a clean answer';
      it(`${fact}: Redis stopped mid-request, the write ${fault}; down at the redelivery, then back empty: applied once`, async () => {
        useRedis(redis.url, kind);
        const scenario = paymentOf(fact);
        if (kind) providers.storeFaults.inject({ kind, method: 'PUT', path: ORDER_WRITE, commit: 'after' });
        stopRedisOnOrderWrite(() => redis.stop());

        expect((await deliverEvent(scenario.event)).status).toBe(400);
        customerEditsCart(scenario);
        // While Redis is down the webhook changes nothing: the store is not even read.
        const callsWhileDown = providers.callsTo('store').length;
        expect((await deliverEvent(scenario.event)).status).toBe(400);
        expect(providers.callsTo('store')).toHaveLength(callsWhileDown);

        await redis.restart();
        resetServices();
        expect((await deliverEvent(scenario.event)).status).toBe(200);
        expectAppliedOnce(fact, scenario);
      });

      for (const followup of ['redelivery', 'reconciliation'] as const) {
        it(`${fact}: the write ${fault}, Redis restarted empty, then ${followup}: applied once`, async () => {
          useRedis(redis.url, kind);
          const scenario = paymentOf(fact);
          if (kind) providers.storeFaults.inject({ kind, method: 'PUT', path: ORDER_WRITE, commit: 'after' });

          expect((await deliverEvent(scenario.event)).status).toBe(kind ? 400 : 200);
          customerEditsCart(scenario);
          await redis.restart();
          resetServices();

          await followUp(followup, scenario.event, false);
          expectAppliedOnce(fact, scenario);
        });
      }
    }
  }

  /** A service instance: its own Redis connection, locks and memory, the same store and configuration. */
  function instance(url: string): Services & { connection: RedisConnection } {
    const base = getServices();
    const config = getConfig();
    const connection = redisConnection(url);
    const shared = new RedisOrderLocks(connection, {
      prefix: config.redisKeyPrefix,
      ttlMs: orderLockTtlMs(config.upstreamTimeoutMs),
      reserveMs: config.upstreamTimeoutMs,
    });
    const store = new WooCommerceStore({ url: TEST_STORE_URL, consumerKey: TEST_CONSUMER_KEY, consumerSecret: TEST_CONSUMER_SECRET }, config.upstreamTimeoutMs);
    return {
      ...base,
      cardEventLocks: orderLocksWithoutFallback(shared, new MemoryOrderLocks({ reserveMs: config.upstreamTimeoutMs })),
      processedEvents: new RedisProcessedEvents(connection, { prefix: config.redisKeyPrefix }),
      store: () => store,
      connection,
    };
  }

  /** Until the instance's connection, reconnecting in the background, answers again. */
  const reconnected = (services: { connection: RedisConnection }) =>
    eventually(() => services.connection.run('ping', (redis) => redis.ping()).then(() => true, () => false));

  /** One delivery to one instance, within a request's deadline as the route gives it: its status. */
  async function deliverTo(services: Services, event: StripeEvent): Promise<number> {
    const { payload, signature } = signCardEvent(event, TEST_WEBHOOK_SECRET);
    try {
      await withRequestDeadline(REQUEST_BUDGET_TIMEOUTS * TIMEOUT_MS, () => handleCardWebhook(payload, signature, services, {}));
      return 200;
    } catch (error) {
      // The route answers every failure of the card webhook 400 (docs/contract.md#spec-7).
      expect(error).toBeInstanceOf(ServiceError);
      return 400;
    }
  }

  for (const fact of ['success', 'failure'] as const) {
    for (const kind of [undefined, 'reset', 'status_500', 'truncated_json_200'] as const) {
      const fault = kind ? `, the first write ${kind} after commit` : '';
      it(`${fact}: two instances, Redis down: both refuse and change nothing; Redis back${fault}: applied once`, async () => {
        await redis.stop();
        useRedis(redis.url);
        const [a, b] = [instance(redis.url), instance(redis.url)];
        const scenario = paymentOf(fact);

        expect(await Promise.all([deliverTo(a, scenario.event), deliverTo(b, scenario.event)])).toEqual([400, 400]);
        expect(providers.callsTo('store')).toEqual([]);

        await redis.restart();
        await Promise.all([reconnected(a), reconnected(b)]);
        if (kind) providers.storeFaults.inject({ kind, method: 'PUT', path: ORDER_WRITE, commit: 'after' });
        const statuses = await Promise.all([deliverTo(a, scenario.event), deliverTo(b, scenario.event)]);
        expect(statuses.sort()).toEqual(kind ? [200, 400] : [200, 200]);
        customerEditsCart(scenario);
        expect(await Promise.all([deliverTo(a, scenario.event), deliverTo(b, scenario.event)])).toEqual([200, 200]);
        expectAppliedOnce(fact, scenario);
      });
    }
  }
});

describe('refunds, disputes and delayed payments: an answer lost after the store committed, then the redelivery: applied once', () => {
  beforeEach(() => {
    useTestEnv({ ...envFor(), CARD_LIFECYCLE_EVENTS: 'refunds,disputes,async' });
  });

  const notesOf = (orderId: number) => (providers.woo.notes.get(orderId) ?? []).map((n) => n.note);
  const refundsOf = (orderId: number) => providers.woo.refunds.get(orderId) ?? [];

  /** The first delivery meets the fault and answers 400; the redelivery and one more answer 200. */
  async function throughFault(event: StripeEvent, fault: Parameters<typeof providers.storeFaults.inject>[0]): Promise<void> {
    providers.storeFaults.inject(fault);
    expect((await deliverEvent(event)).status).toBe(400);
    expect(providers.storeFaults.fired).toHaveLength(1);
    expect((await deliverEvent(event)).status).toBe(200);
    expect((await deliverEvent(event)).status).toBe(200);
  }

  for (const fault of [
    { kind: 'reset', method: 'POST', path: /\/refunds$/, commit: 'after' },
    { kind: 'status_500', method: 'POST', path: /\/refunds$/, commit: 'before' },
  ] as const) {
    it(`charge.refunded, the refund's creation ${fault.kind} ${fault.commit} commit: one WooCommerce refund`, async () => {
      const intent = await paidOrder(providers, 7801 + (fault.commit === 'after' ? 0 : 1));
      const orderId = Number(intent.metadata.shop_order_id);
      const { refund, event } = providers.stripe.refund(intent.id, 1000);
      await throughFault(event, fault);
      expect(refundsOf(orderId).map((r) => r.meta_data.find((m) => m.key === '_provider_refund_id')?.value)).toEqual([refund.id]);
    });
  }

  for (const fault of [
    { kind: 'reset', method: 'DELETE', path: /\/refunds\/\d+$/, commit: 'after' },
    { kind: 'truncated_json_200', method: 'POST', path: /\/notes$/, commit: 'after' },
    { kind: 'html_200', method: 'DELETE', path: /\/refunds\/\d+$/, commit: 'after' },
    { kind: 'status_502', method: 'DELETE', path: /\/refunds\/\d+$/, commit: 'before' },
  ] as const) {
    it(`a failed refund's removal, ${fault.method} ${fault.kind} ${fault.commit} commit: the refund removed, one note`, async () => {
      nextOrderId += 1;
      const intent = await paidOrder(providers, nextOrderId);
      const { refund, event } = providers.stripe.refund(intent.id, 1000);
      expect((await deliverEvent(event)).status).toBe(200);
      await throughFault(providers.stripe.updateRefund(refund.id, 'failed'), fault);
      expect(refundsOf(nextOrderId)).toEqual([]);
      expect(notesOf(nextOrderId)).toEqual([expect.stringContaining(refund.id)]);
    });
  }

  for (const fault of [
    { kind: 'reset', method: 'POST', path: /\/notes$/, commit: 'after' },
    { kind: 'status_500', method: 'PUT', path: ORDER_WRITE, commit: 'before' },
    { kind: 'html_200', method: 'PUT', path: ORDER_WRITE, commit: 'after' },
  ] as const) {
    it(`a dispute opened, ${fault.method} ${fault.kind} ${fault.commit} commit: on hold once, one note`, async () => {
      nextOrderId += 1;
      const intent = await paidOrder(providers, nextOrderId);
      const { dispute, event } = providers.stripe.dispute(intent.id);
      const writesBefore = appliedOrderWrites(nextOrderId);
      await throughFault(event, fault);
      expect(providers.woo.get(nextOrderId).status).toBe('on-hold');
      expect(appliedOrderWrites(nextOrderId) - writesBefore).toBe(1);
      expect(notesOf(nextOrderId)).toEqual([expect.stringContaining(`${dispute.id} opened`)]);
    });

    it(`a dispute closed, ${fault.method} ${fault.kind} ${fault.commit} commit: restored once, one note`, async () => {
      nextOrderId += 1;
      const intent = await paidOrder(providers, nextOrderId);
      const { dispute, event } = providers.stripe.dispute(intent.id);
      expect((await deliverEvent(event)).status).toBe(200);
      const writesBefore = appliedOrderWrites(nextOrderId);
      await throughFault(providers.stripe.closeDispute(dispute.id, 'won'), fault);
      expect(providers.woo.get(nextOrderId).status).toBe('processing');
      expect(appliedOrderWrites(nextOrderId) - writesBefore).toBe(1);
      expect(notesOf(nextOrderId).filter((note) => note.includes('closed (won)'))).toHaveLength(1);
    });
  }

  it('dispute funds withdrawn, the note answered with a reset after it was stored: one note', async () => {
    nextOrderId += 1;
    const intent = await paidOrder(providers, nextOrderId);
    const { dispute, event } = providers.stripe.dispute(intent.id);
    expect((await deliverEvent(event)).status).toBe(200);
    await throughFault(providers.stripe.disputeFunds(dispute.id, 'withdrawn'), { kind: 'reset', method: 'POST', path: /\/notes$/, commit: 'after' });
    expect(notesOf(nextOrderId).filter((note) => note.startsWith('Stripe withdrew'))).toHaveLength(1);
  });

  it('a delayed payment processing, the on-hold write answered 500 after commit: held once', async () => {
    nextOrderId += 1;
    providers.woo.seed({ id: nextOrderId, lines: [{ total: '10.00' }] });
    const intent = providers.stripe.create({ amount: '1000', currency: 'usd', metadata: { shop_order_id: String(nextOrderId) } });
    providers.stripe.process(intent.id);
    await throughFault(providers.stripe.events.events.at(-1) as StripeEvent, { kind: 'status_500', method: 'PUT', path: ORDER_WRITE, commit: 'after' });
    expect(providers.woo.get(nextOrderId).status).toBe('on-hold');
    expect(appliedOrderWrites(nextOrderId)).toBe(1);
  });
});
