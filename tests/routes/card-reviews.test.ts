/**
 * CARD_LIFECYCLE_EVENTS=reviews: a Radar review holds its order until it is
 * approved, other closes leave the order to the refund and dispute events, and
 * an issuer's early fraud warning tells the shop what Stripe recommends. All
 * applied once, under the card webhook's receipts and locks, and reconciled.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { GET as reconcilePayments } from '@/app/api/cron/reconcile-payments/route';
import { resetServices } from '@/lib/services';
import { deliverEvent, paidOrder as paidOrderAt } from '../support/card-events';
import { TEST_CRON_SECRET, useTestEnv } from '../support/env';
import { useProviders } from '../support/providers';
import { noRedis, REDIS_SKIP_REASON, REDIS_URL, redisConnection, testPrefix } from '../support/redis';

const providers = useProviders();

beforeEach(() => {
  useTestEnv({ CARD_LIFECYCLE_EVENTS: 'reviews' });
  providers.reset();
});

const paidOrder = (orderId: number, recorded = true) => paidOrderAt(providers, orderId, recorded);
const notesOf = (orderId: number) => providers.woo.notes.get(orderId) ?? [];
const noteText = (orderId: number) => notesOf(orderId).map((n) => n.note).join('\n');
const meta = (orderId: number, key: string) => providers.woo.get(orderId).meta_data.find((m) => m.key === key)?.value;
const facts = (orderId: number) => JSON.parse(String(meta(orderId, '_cardprovider_payment'))) as Record<string, unknown>;

describe('review.opened', () => {
  it('puts the paid order on hold, remembers its status and the review, with a private note naming the reason', async () => {
    const intent = await paidOrder(2101);
    const { review, event } = providers.stripe.openReview(intent.id, 'manual');

    expect(await deliverEvent(event)).toEqual({ status: 200, body: { received: true } });

    const order = providers.woo.get(2101);
    expect(order.status).toBe('on-hold');
    expect(meta(2101, '_review_id')).toBe(review.id);
    expect(facts(2101)).toMatchObject({ resume: 'processing', reviews: { [review.id]: { open: true } } });
    expect(notesOf(2101)).toEqual([expect.objectContaining({ customer_note: false, note: expect.stringContaining(`${review.id} opened (reason: manual)`) })]);
    expect(order.customer_note).toBe('');
  });

  it('holds an order whose payment is not recorded yet at once, and keeps it held when the payment comes', async () => {
    const intent = await paidOrder(2102, false);
    const { review, event } = providers.stripe.openReview(intent.id);

    expect((await deliverEvent(event)).status).toBe(200);
    expect(providers.woo.get(2102).status).toBe('on-hold');

    const succeeded = providers.stripe.events.events.find((e) => e.type === 'payment_intent.succeeded')!;
    expect((await deliverEvent(succeeded)).status).toBe(200);
    expect(providers.woo.get(2102)).toMatchObject({ status: 'on-hold', transaction_id: expect.stringMatching(/^ch_/) });
    expect((await deliverEvent(providers.stripe.closeReview(review.id, 'approved'))).status).toBe(200);
    expect(providers.woo.get(2102).status).toBe('processing');
  });

  it('applies once: the same event twice at once, again, and again after the memory of applied events is lost', async () => {
    const intent = await paidOrder(2103);
    const { event } = providers.stripe.openReview(intent.id);

    const answers = await Promise.all([deliverEvent(event), deliverEvent(event)]);
    expect(answers.map((a) => a.status)).toEqual([200, 200]);
    expect((await deliverEvent(event)).status).toBe(200);
    // A Redis flush or a restart without Redis: the receipt on the order still says it was applied.
    resetServices();
    useTestEnv({ CARD_LIFECYCLE_EVENTS: 'reviews' });
    expect((await deliverEvent(event)).status).toBe(200);
    expect(providers.orderUpdates(2103)).toHaveLength(2); // the payment, then the hold
    expect(notesOf(2103)).toHaveLength(1);
    const facts = providers.woo.get(2103).meta_data.filter((m) => m.key === '_cardprovider_payment');
    expect(JSON.parse(String(facts[0]?.value)).reviews).toEqual({ [event.data.object.id as string]: expect.objectContaining({ open: true }) });
  });
});

describe('review.closed', () => {
  it('approved: restores the remembered status, with a note', async () => {
    const intent = await paidOrder(2111);
    const { review, event } = providers.stripe.openReview(intent.id);
    expect((await deliverEvent(event)).status).toBe(200);

    const closed = providers.stripe.closeReview(review.id, 'approved');
    expect((await deliverEvent(closed)).status).toBe(200);
    expect((await deliverEvent(closed)).status).toBe(200);

    expect(providers.woo.get(2111).status).toBe('processing');
    expect(meta(2111, '_review_closed_reason')).toBe('approved');
    expect(noteText(2111)).toMatch(new RegExp(`review ${review.id} approved. The order is back to processing`));
    expect(providers.orderUpdates(2111)).toHaveLength(3);
  });

  it('approved after the shop moved the order on: left as the shop set it', async () => {
    const intent = await paidOrder(2112);
    const { review, event } = providers.stripe.openReview(intent.id);
    expect((await deliverEvent(event)).status).toBe(200);
    providers.woo.update(2112, { status: 'cancelled' }); // the shop, in the admin

    expect((await deliverEvent(providers.stripe.closeReview(review.id, 'approved'))).status).toBe(200);

    expect(providers.woo.get(2112).status).toBe('cancelled');
    expect(noteText(2112)).toMatch(/approved. The order stays cancelled.$/m);
  });

  it('approved while a dispute holds the order: the order stays on hold', async () => {
    useTestEnv({ CARD_LIFECYCLE_EVENTS: 'reviews,disputes' });
    const intent = await paidOrder(2113);
    const { review, event } = providers.stripe.openReview(intent.id);
    expect((await deliverEvent(event)).status).toBe(200);
    expect((await deliverEvent(providers.stripe.dispute(intent.id).event)).status).toBe(200);

    expect((await deliverEvent(providers.stripe.closeReview(review.id, 'approved'))).status).toBe(200);

    expect(providers.woo.get(2113).status).toBe('on-hold');
  });

  it('approved before its opening arrived: the late opening is stale and holds nothing', async () => {
    const intent = await paidOrder(2114);
    const { review, event: opened } = providers.stripe.openReview(intent.id);
    const closed = providers.stripe.closeReview(review.id, 'approved');

    expect((await deliverEvent(closed)).status).toBe(200);
    expect((await deliverEvent(opened)).status).toBe(200);
    expect(providers.woo.get(2114).status).toBe('processing');
  });

  it.each(['refunded', 'refunded_as_fraud'])('%s: the order stays on hold, the refund events and the shop decide', async (reason) => {
    const intent = await paidOrder(2115);
    const { review, event } = providers.stripe.openReview(intent.id);
    expect((await deliverEvent(event)).status).toBe(200);

    expect((await deliverEvent(providers.stripe.closeReview(review.id, reason))).status).toBe(200);

    expect(providers.woo.get(2115).status).toBe('on-hold');
    expect(meta(2115, '_review_closed_reason')).toBe(reason);
    expect(noteText(2115)).toContain(`review ${review.id} closed (${reason})`);
  });

  it.each(['disputed', 'redacted'])('%s: the review\'s hold ends (a dispute holds the order by its own event)', async (reason) => {
    const intent = await paidOrder(2118);
    const { review, event } = providers.stripe.openReview(intent.id);
    expect((await deliverEvent(event)).status).toBe(200);

    expect((await deliverEvent(providers.stripe.closeReview(review.id, reason))).status).toBe(200);

    expect(providers.woo.get(2118).status).toBe('processing');
    expect(noteText(2118)).toContain(`review ${review.id} closed (${reason})`);
  });

  it('closed for another reason before its opening arrived: held as if they came in order, until the shop moves it on', async () => {
    const intent = await paidOrder(2116);
    const { review, event: opened } = providers.stripe.openReview(intent.id);
    const closed = providers.stripe.closeReview(review.id, 'refunded_as_fraud');

    expect((await deliverEvent(closed)).status).toBe(200);
    expect((await deliverEvent(opened)).status).toBe(200);

    expect(providers.woo.get(2116).status).toBe('on-hold');
    expect(notesOf(2116)).toHaveLength(1);
  });

  it('a second review of the order is held and approved as itself', async () => {
    const intent = await paidOrder(2117);
    const first = providers.stripe.openReview(intent.id);
    expect((await deliverEvent(first.event)).status).toBe(200);
    expect((await deliverEvent(providers.stripe.closeReview(first.review.id, 'approved'))).status).toBe(200);
    const second = providers.stripe.openReview(intent.id, 'manual');
    expect((await deliverEvent(second.event)).status).toBe(200);
    expect(providers.woo.get(2117).status).toBe('on-hold');

    expect((await deliverEvent(providers.stripe.closeReview(second.review.id, 'approved'))).status).toBe(200);
    expect(providers.woo.get(2117).status).toBe('processing');
  });
});

describe('radar.early_fraud_warning.created', () => {
  it('adds a private note telling the shop to refund before a dispute arrives, once, and leaves the status', async () => {
    const intent = await paidOrder(2121);
    const { warning, event } = providers.stripe.earlyFraudWarning(intent.id);

    const answers = await Promise.all([deliverEvent(event), deliverEvent(event)]);
    expect(answers.map((a) => a.status)).toEqual([200, 200]);
    resetServices();
    useTestEnv({ CARD_LIFECYCLE_EVENTS: 'reviews' });
    expect((await deliverEvent({ ...event, id: `${event.id}_again` })).status).toBe(200);

    expect(providers.woo.get(2121).status).toBe('processing');
    expect(notesOf(2121)).toEqual([
      expect.objectContaining({ customer_note: false, note: expect.stringMatching(new RegExp(`${warning.id}.*made_with_stolen_card.*recommends refunding it before a dispute arrives`)) }),
    ]);
  });

  it('says there is nothing more to do once the charge is disputed', async () => {
    useTestEnv({ CARD_LIFECYCLE_EVENTS: 'reviews' });
    const intent = await paidOrder(2122);
    providers.stripe.dispute(intent.id);
    const { event } = providers.stripe.earlyFraudWarning(intent.id, 'unauthorized_use_of_card');

    expect((await deliverEvent(event)).status).toBe(200);
    expect(noteText(2122)).toMatch(/already disputed or fully refunded/);
  });
});

describe('CARD_LIFECYCLE_EVENTS without reviews', () => {
  it('acknowledges reviews and fraud warnings and changes nothing', async () => {
    useTestEnv({ CARD_LIFECYCLE_EVENTS: 'refunds,disputes,async' });
    const intent = await paidOrder(2131);
    const { review, event } = providers.stripe.openReview(intent.id);
    const warning = providers.stripe.earlyFraudWarning(intent.id).event;
    const closed = providers.stripe.closeReview(review.id, 'approved');

    for (const e of [event, warning, closed]) expect(await deliverEvent(e)).toEqual({ status: 200, body: { received: true } });

    expect(providers.woo.get(2131).status).toBe('processing');
    expect(notesOf(2131)).toEqual([]);
    expect(providers.orderUpdates(2131)).toHaveLength(1);
  });

  it('refuses a malformed review only when reviews are on', async () => {
    const intent = await paidOrder(2132);
    const { event } = providers.stripe.openReview(intent.id);
    const malformed = { ...event, data: { object: { id: 'prv_x', open: 'yes' } } };
    expect((await deliverEvent(malformed)).status).toBe(400);
    useTestEnv({ CARD_LIFECYCLE_EVENTS: '' });
    expect((await deliverEvent(malformed)).status).toBe(200);
  });
});

describe('reconciliation', () => {
  it('lists reviews and fraud warnings the webhook never delivered, and applies them once', async () => {
    useTestEnv({ CARD_LIFECYCLE_EVENTS: 'reviews', CRON_SECRET: TEST_CRON_SECRET });
    const intent = await paidOrder(2141);
    providers.stripe.openReview(intent.id);
    providers.stripe.earlyFraudWarning(intent.id);
    const run = async () =>
      (await reconcilePayments(
        new Request('http://localhost:3000/api/cron/reconcile-payments', { headers: { authorization: `Bearer ${TEST_CRON_SECRET}`, 'user-agent': 'vercel-cron/1.0' } }),
      )).json();

    expect(await run()).toMatchObject({ applied: 2, failed: [] });
    expect(providers.woo.get(2141).status).toBe('on-hold');
    expect(notesOf(2141)).toHaveLength(2);
    expect(await run()).toMatchObject({ applied: 0 });
    expect(notesOf(2141)).toHaveLength(2);
  });
});

describe.skipIf(noRedis)(`with Redis${noRedis ? ` (${REDIS_SKIP_REASON})` : ''}`, () => {
  it('a review redelivered after Redis lost its memory of applied events is found by its receipt: held once', async () => {
    const prefix = testPrefix('card-reviews');
    useTestEnv({ CARD_LIFECYCLE_EVENTS: 'reviews', REDIS_URL, REDIS_KEY_PREFIX: prefix });
    resetServices();
    try {
      const intent = await paidOrder(2151);
      const { event } = providers.stripe.openReview(intent.id);
      expect((await deliverEvent(event)).status).toBe(200);

      // Redis flushed (or restarted empty): this test's keys are gone.
      const redis = await redisConnection().client();
      const keys = await redis.keys(`${prefix}*`);
      expect(keys.length).toBeGreaterThan(0);
      await redis.del(keys);

      expect((await deliverEvent(event)).status).toBe(200);
      expect(providers.orderUpdates(2151)).toHaveLength(2); // the payment, then the hold
      expect(notesOf(2151)).toHaveLength(1);
    } finally {
      resetServices();
    }
  });
});
