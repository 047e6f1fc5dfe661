/**
 * An admin refund moves money once across lost answers and
 * races with `charge.refunded`, a reused WooCommerce refund id is refused, and
 * three-decimal currencies refund in the steps they were charged in. Run
 * against the stand-ins (WooCommerce drops a refund whose gateway call failed,
 * as wc_create_refund does).
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { POST as refundsPOST } from '@/app/api/store/refunds/route';
import { reconcilePayments } from '@/lib/cron/reconcile-payments';
import { getServices } from '@/lib/services';
import { ADOPTION_WINDOW_S, STORE_REFUND_ANSWER_MS } from '@/lib/store-callbacks/refund';
import { requestTimeLeftMs } from '@/lib/upstream/budget';
import { UNSETTLED_STORE_REFUND_MS } from '@/lib/orders/refund-link';
import type { StripeEvent } from '@/stand-ins/stripe/events';
import { WooError } from '@/stand-ins/woocommerce/model';
import { deliverEvent, paidOrder as paidOrderAt } from '../support/card-events';
import { useTestEnv } from '../support/env';
import { useProviders } from '../support/providers';
import { callStore, TEST_STORE_CALLBACK_SECRET, testGateway } from '../support/store-callbacks';

const providers = useProviders();

beforeEach(() => {
  useTestEnv({ STORE_CALLBACK_SECRET: TEST_STORE_CALLBACK_SECRET, CARD_LIFECYCLE_EVENTS: 'refunds' });
  providers.reset();
  providers.woo.gateway = testGateway();
});

const paidOrder = (orderId: number) => paidOrderAt(providers, orderId);
const refundsOf = (orderId: number) => providers.woo.refunds.get(orderId) ?? [];
const stripeIdOf = (refund: { meta_data: { key: string; value: unknown }[] }) => refund.meta_data.find((m) => m.key === '_provider_refund_id')?.value;
/** The stand-in's own refund objects (changing one changes Stripe's). */
const stripeRefunds = () => [...providers.stripe.refunds.values()];
const lastChargeRefunded = () => providers.stripe.events.events.filter((e) => e.type === 'charge.refunded').at(-1)!;
const refundFromAdmin = (orderId: number, amount: string) => providers.woo.createRefundViaGateway(orderId, { amount, reason: 'Damaged' });

/** A gateway whose every answer is lost after the service carried the call out (the plugin gives up, WooCommerce drops its refund). */
function answersLost(meanwhile?: () => Promise<void>) {
  let calls = 0;
  return testGateway({
    send: async (request) => {
      calls += 1;
      await refundsPOST(request);
      if (calls === 1 && meanwhile) await meanwhile();
      throw new TypeError('fetch failed: timed out');
    },
  });
}

async function refusal(promise: Promise<unknown>): Promise<string> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(WooError);
  return (error as WooError).message;
}

/** A "Refund manually" entry the shop made a while ago (money returned another way). */
function manualRefund(orderId: number, amount: string) {
  const manual = providers.woo.createRefund(orderId, { amount, api_refund: false, reason: 'Paid back in cash' });
  providers.woo.backdateRefund(manual.id, UNSETTLED_STORE_REFUND_MS);
  return manual;
}

describe('a Refund click repeated after a lost answer', () => {
  it('adopts the Stripe refund of the dropped WooCommerce refund instead of refunding twice, even with a "Refund manually" entry on the order', async () => {
    await paidOrder(2601);
    manualRefund(2601, '10.00');
    providers.woo.gateway = answersLost();
    await refusal(refundFromAdmin(2601, '10.00'));
    expect(refundsOf(2601)).toHaveLength(1);
    const [first] = stripeRefunds();

    providers.woo.gateway = testGateway();
    const again = await refundFromAdmin(2601, '10.00');

    expect(stripeRefunds()).toHaveLength(1);
    expect(stripeIdOf(again)).toBe(first!.id);
    expect(providers.stripe.refunds.get(first!.id)!.metadata).toMatchObject({ shop_refund_id: String(again.id) });
    expect((await deliverEvent(lastChargeRefunded())).status).toBe(200);
    expect(refundsOf(2601).map((r) => r.amount)).toEqual(['10.00', '10.00']);
  });

  it('without a manual entry, the repeated click is answered with that refund too, not refused', async () => {
    await paidOrder(2602);
    providers.woo.gateway = answersLost();
    await refusal(refundFromAdmin(2602, '12.00'));

    providers.woo.gateway = testGateway();
    const again = await refundFromAdmin(2602, '12.00');

    expect(stripeRefunds().map((r) => r.amount)).toEqual([1200]);
    expect(stripeIdOf(again)).toBe(stripeRefunds()[0]!.id);
  });

  it('a charge.refunded arriving before the plugin kept the adopted id sees the new WooCommerce refund, not a dropped one to record', async () => {
    await paidOrder(2603);
    providers.woo.gateway = answersLost();
    await refusal(refundFromAdmin(2603, '8.00'));
    const retry = providers.woo.createRefund(2603, { amount: '8.00', api_refund: false });
    expect((await callStore('refunds', { order_id: 2603, refund_id: retry.id, amount: '8.00' })).status).toBe(200);

    const event = lastChargeRefunded();
    expect((await deliverEvent(event)).status).toBe(400);
    providers.woo.backdateRefund(retry.id, UNSETTLED_STORE_REFUND_MS);
    expect((await deliverEvent(event)).status).toBe(200);

    expect(refundsOf(2603).map((r) => r.id)).toEqual([retry.id]);
  });

  it('a Stripe refund older than the adoption window is not adopted: a click of the same amount a day later is refused by the guard', async () => {
    await paidOrder(2605);
    providers.woo.gateway = answersLost();
    await refusal(refundFromAdmin(2605, '8.00'));
    stripeRefunds()[0]!.created -= ADOPTION_WINDOW_S + 1;

    providers.woo.gateway = testGateway();
    expect(await refusal(refundFromAdmin(2605, '8.00'))).toMatch(/Stripe has already refunded 8\.00 USD/);
    expect(stripeRefunds()).toHaveLength(1);
  });

  it('a refund of another amount is not adopted: the guard refuses it while the dropped one is not recorded', async () => {
    await paidOrder(2604);
    providers.woo.gateway = answersLost();
    await refusal(refundFromAdmin(2604, '8.00'));

    providers.woo.gateway = testGateway();
    expect(await refusal(refundFromAdmin(2604, '5.00'))).toMatch(/Stripe has already refunded 8\.00 USD/);
    expect(stripeRefunds()).toHaveLength(1);
  });
});

describe('a Stripe refund is recorded once, whatever WooCommerce held when its event came', () => {
  it('charge.refunded handled while WooCommerce still holds the admin refund it then drops: 400 first, recorded on the redelivery', async () => {
    await paidOrder(2611);
    const answers: number[] = [];
    providers.woo.gateway = answersLost(async () => {
      answers.push((await deliverEvent(lastChargeRefunded())).status);
    });
    await refusal(refundFromAdmin(2611, '10.00'));
    expect(answers).toEqual([400]);
    expect(refundsOf(2611)).toEqual([]);

    expect((await deliverEvent(lastChargeRefunded())).status).toBe(200);
    expect((await deliverEvent(lastChargeRefunded())).status).toBe(200);

    expect(refundsOf(2611).map((r) => [r.amount, stripeIdOf(r)])).toEqual([['10.00', stripeRefunds()[0]!.id]]);
    expect(refundsOf(2611)[0]!.reason).toBe(`Refunded at Stripe (${stripeRefunds()[0]!.id}) for the admin's refund #5000, which WooCommerce dropped when its answer was lost`);
  });

  it('the same, recorded by payment reconciliation when Stripe’s redelivery has not come yet', async () => {
    await paidOrder(2612);
    providers.woo.gateway = answersLost(async () => {
      expect((await deliverEvent(lastChargeRefunded())).status).toBe(400);
    });
    await refusal(refundFromAdmin(2612, '10.00'));

    const everything = { fits: () => true };
    await reconcilePayments(getServices(), everything);
    await reconcilePayments(getServices(), everything);

    expect(refundsOf(2612).map((r) => r.amount)).toEqual(['10.00']);
  });

  it('a full Dashboard refund racing an admin refund that is then refused: recorded in full once the admin refund is dropped', async () => {
    const intent = await paidOrder(2613);
    let dashboardEvent: StripeEvent | undefined;
    const early: number[] = [];
    providers.woo.gateway = testGateway({
      send: async (request) => {
        dashboardEvent ??= providers.stripe.refund(intent.id).event;
        early.push((await deliverEvent(dashboardEvent)).status);
        return refundsPOST(request);
      },
    });

    expect(await refusal(refundFromAdmin(2613, '10.00'))).toMatch(/Stripe has already refunded 30\.00 USD/);
    expect(early).toEqual([400]);

    expect((await deliverEvent(dashboardEvent!)).status).toBe(200);
    expect(refundsOf(2613).map((r) => r.amount)).toEqual(['30.00']);
    expect(providers.woo.get(2613).status).toBe('refunded');
  });

  it('an admin refund WooCommerce kept without the Stripe id (the plugin died) counts as recorded once it is past the wait', async () => {
    await paidOrder(2614);
    const kept = providers.woo.createRefund(2614, { amount: '6.00', api_refund: false });
    await callStore('refunds', { order_id: 2614, refund_id: kept.id, amount: '6.00' });
    expect((await deliverEvent(lastChargeRefunded())).status).toBe(400);

    providers.woo.backdateRefund(kept.id, UNSETTLED_STORE_REFUND_MS);
    expect((await deliverEvent(lastChargeRefunded())).status).toBe(200);
    expect(refundsOf(2614).map((r) => r.id)).toEqual([kept.id]);
  });

  it('a refund larger than what remains waits while a young manual refund might still go, and is logged once it cannot', async () => {
    const intent = await paidOrder(2615);
    const manual = providers.woo.createRefund(2615, { amount: '25.00', api_refund: false });
    const { event } = providers.stripe.refund(intent.id, 1000);

    expect((await deliverEvent(event)).status).toBe(400);
    providers.woo.backdateRefund(manual.id, UNSETTLED_STORE_REFUND_MS);
    expect((await deliverEvent(event)).status).toBe(200);
    expect(refundsOf(2615)).toHaveLength(1);
  });
});

describe('a WooCommerce refund id handed out again with another amount', () => {
  it('is refused, not answered with the old Stripe refund, and the old one is recorded for what it moved', async () => {
    await paidOrder(2621);
    providers.woo.gateway = answersLost();
    await refusal(refundFromAdmin(2621, '12.00'));
    const [old] = stripeRefunds();
    providers.woo.restartDatabase();

    providers.woo.gateway = testGateway();
    const message = await refusal(refundFromAdmin(2621, '5.00'));

    expect(old!.metadata.shop_refund_id).toBe(String(5000));
    expect(message).toMatch(/Stripe already holds a refund of 12\.00 USD .* made for WooCommerce refund #5000, not 5\.00 USD/);
    expect(stripeRefunds()).toHaveLength(1);
    expect(refundsOf(2621)).toEqual([]);
    expect((await deliverEvent(lastChargeRefunded())).status).toBe(200);
    expect(refundsOf(2621).map((r) => [r.amount, stripeIdOf(r)])).toEqual([['12.00', old!.id]]);
  });
});

/** A paid KWD order whose total is `total` (decimal string), charged as Stripe charges it. */
async function paidKwdOrder(orderId: number, total: string, charged: number) {
  providers.woo.seed({ id: orderId, currency: 'KWD', lines: [{ total }] });
  const intent = providers.stripe.create({ amount: String(charged), currency: 'kwd', metadata: { shop_order_id: String(orderId) } });
  providers.stripe.succeed(intent.id);
  expect((await deliverEvent(providers.stripe.events.events.at(-1)!)).status).toBe(200);
  expect(providers.woo.get(orderId).status).toBe('processing');
  return intent;
}

describe('three-decimal currencies refund in the multiples of 10 they were charged in', () => {
  it.each([
    ['12.344', 12340, '12.340'],
    ['12.345', 12350, '12.350'],
  ])('a full refund from the admin of %s KWD moves exactly the %s charged, and the plugin is told so', async (total, charged, answered) => {
    const orderId = total === '12.344' ? 2631 : 2632;
    await paidKwdOrder(orderId, total, charged);

    const refund = await refundFromAdmin(orderId, total);

    expect(stripeRefunds().map((r) => r.amount)).toEqual([charged]);
    expect(refund.amount).toBe(total);
    expect(providers.woo.get(orderId).status).toBe('refunded');
    const answer = await callStore('refunds', { order_id: orderId, refund_id: refund.id, amount: total });
    expect(answer.body).toEqual({ refund_id: stripeIdOf(refund), amount: answered });
    expect((await deliverEvent(lastChargeRefunded())).status).toBe(200);
    expect(refundsOf(orderId)).toHaveLength(1);
  });

  it('a partial refund must be a multiple of 0.010 KWD; the last one moves what Stripe has left', async () => {
    await paidKwdOrder(2633, '12.345', 12350);

    expect(await refusal(refundFromAdmin(2633, '5.004'))).toBe(
      'Stripe refunds KWD in steps of 0.010: refund 5.000 or 5.010 KWD (only the refund of all that remains may end in other digits).',
    );
    await refundFromAdmin(2633, '5.010');
    await refundFromAdmin(2633, '7.335');

    expect(stripeRefunds().map((r) => r.amount)).toEqual([5010, 7340]);
    expect(providers.woo.get(2633).status).toBe('refunded');
  });

  it.each([
    ['12.345', 12350],
    ['12.344', 12340],
  ])('charge.refunded of a full Dashboard refund on a %s KWD order records what the order shows, naming what Stripe moved', async (total, charged) => {
    const orderId = total === '12.345' ? 2634 : 2635;
    const intent = await paidKwdOrder(orderId, total, charged);
    const { refund, event } = providers.stripe.refund(intent.id);

    expect((await deliverEvent(event)).status).toBe(200);

    expect(refundsOf(orderId).map((r) => [r.amount, stripeIdOf(r)])).toEqual([[total, refund.id]]);
    expect(refundsOf(orderId)[0]!.reason).toContain(`${(charged / 1000).toFixed(3)} KWD at Stripe`);
    expect(providers.woo.get(orderId).status).toBe('refunded');
  });
});

describe('the time a refund call takes: the service answers a refund call within the plugin’s wait', () => {
  it(`gives the call a deadline of ${STORE_REFUND_ANSWER_MS} ms, lock wait included, whatever UPSTREAM_TIMEOUT_MS allows`, async () => {
    useTestEnv({ STORE_CALLBACK_SECRET: TEST_STORE_CALLBACK_SECRET, CARD_LIFECYCLE_EVENTS: 'refunds', UPSTREAM_TIMEOUT_MS: '60000' });
    await paidOrder(2641);
    const left: number[] = [];
    providers.stripe.beforeExecute = async ({ path }) => {
      if (path === '/v1/refunds') left.push(requestTimeLeftMs());
    };

    await refundFromAdmin(2641, '3.00');

    expect(left).toHaveLength(1);
    expect(left[0]).toBeLessThanOrEqual(STORE_REFUND_ANSWER_MS);
  });
});

describe('a refund from the admin that fails at Stripe before the plugin kept its id', () => {
  it('is removed from WooCommerce once WooCommerce can no longer drop it, the event answered 400 until then', async () => {
    await paidOrder(2651);
    const saved = providers.woo.createRefund(2651, { amount: '9.00', api_refund: false });
    const answer = await callStore('refunds', { order_id: 2651, refund_id: saved.id, amount: '9.00' });
    const failed = providers.stripe.updateRefund(answer.body.refund_id, 'failed');

    expect((await deliverEvent(failed)).status).toBe(400);
    expect(refundsOf(2651)).toHaveLength(1);
    providers.woo.backdateRefund(saved.id, UNSETTLED_STORE_REFUND_MS);
    expect((await deliverEvent(failed)).status).toBe(200);

    expect(refundsOf(2651)).toEqual([]);
    expect(providers.woo.notes.get(2651)).toEqual([expect.objectContaining({ note: expect.stringContaining(answer.body.refund_id) })]);
  });
});
