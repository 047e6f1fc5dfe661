// charge.refunded: each Stripe refund recorded once as a WooCommerce refund, `api_refund: false`
// (docs/contract.md#admin-refunds-exactly-once). The refunds are listed from Stripe: API 2022-11-15 dropped them from the event.
import { CardEventTooEarlyError } from '@/lib/errors';
import { chargeableAmount, formatMinorUnits, toMinorUnits } from '@/lib/money';
import { log } from '@/lib/log';
import type { ChargeFacts } from '@/lib/card/events';
import { META } from '@/lib/orders/meta-keys';
import { isPaid } from '@/lib/orders/payable';
import { isUnsettled, refundLink } from '@/lib/orders/refund-link';
import type { Services } from '@/lib/services';
import { OTHER_PAYMENT } from '@/lib/webhooks/card/duplicate-payment';
import { currentPaymentState } from '@/lib/orders/order-payment';
import { isOtherPayment } from '@/lib/webhooks/card/transition';
import { cardEventHandler, changed, unchanged, type Changed, type Unchanged } from '@/lib/webhooks/card/handler';

const RECORDED_STATUSES: ReadonlySet<string> = new Set(['succeeded', 'pending', 'requires_action']);

export type ChargeRefundedOutcome = Changed<'refund_recorded'> | Unchanged<'refund_already_recorded' | typeof OTHER_PAYMENT>;

/** What remains when Stripe moved it rounded to its steps (12.345 for 12.350), else Stripe's. */
function recordedAmount(stripeAmount: number, remaining: number, currency: string): number {
  return stripeAmount !== remaining && chargeableAmount(remaining, currency) === stripeAmount ? remaining : stripeAmount;
}

export async function recordChargeRefunds(orderId: number, charge: ChargeFacts, services: Services): Promise<ChargeRefundedOutcome> {
  const store = services.store();
  const order = await store.getOrder(orderId);
  const state = currentPaymentState(order);
  // Money the order received, paid or held for a mismatch, is what a refund can record; before it, Stripe retries.
  if (!isPaid(order) && !state.paid && !state.mismatch) {
    throw new CardEventTooEarlyError('Webhook Error: the order is not paid yet; the refund is recorded once the payment is');
  }
  if (isOtherPayment(order, state, charge, 'refund')) return unchanged(OTHER_PAYMENT);

  const refunds = await (await services.card()).listChargeRefunds(charge.chargeId);
  const existing = await store.listRefunds(orderId);
  const currency = order.currency.toUpperCase();
  const now = Date.now();
  let remaining = toMinorUnits(order.total, currency) - existing.reduce((sum, refund) => sum + toMinorUnits(refund.amount, currency), 0);
  const droppable = existing.filter((refund) => isUnsettled(refund, now)).reduce((sum, refund) => sum + toMinorUnits(refund.amount, currency), 0);

  let created = 0;
  const waiting: string[] = [];
  for (const refund of refunds) {
    if (!RECORDED_STATUSES.has(refund.status)) continue;
    const link = refundLink(refund, existing, currency, now);
    if (link.kind === 'recorded') continue;
    if (link.kind === 'in_flight') {
      waiting.push(refund.refundId);
      continue;
    }
    const amount = recordedAmount(refund.amount, remaining, currency);
    if (refund.currency !== currency.toLowerCase() || amount > remaining) {
      if (refund.currency === currency.toLowerCase() && amount <= remaining + droppable) {
        waiting.push(refund.refundId);
        continue;
      }
      // WooCommerce would refuse it ("Invalid refund amount."): the shop must look, not Stripe retry.
      log.error('card.refund_not_recordable', {
        orderId,
        refundId: refund.refundId,
        amount: refund.amount,
        currency: refund.currency,
        remaining,
        orderCurrency: currency,
        action: 'record the refund in WooCommerce by hand',
      });
      continue;
    }
    const moved = amount === refund.amount ? '' : `: ${formatMinorUnits(refund.amount, currency)} ${currency} at Stripe, which moves ${currency} in steps of 0.010`;
    const dropped = link.kind === 'orphaned' ? ` for the admin's refund #${refund.storeRefundId}, which WooCommerce dropped when its answer was lost` : '';
    await store.createRefund(orderId, {
      amount: formatMinorUnits(amount, currency),
      reason: `Refunded at Stripe (${refund.refundId})${dropped}${moved}`,
      meta: { [META.providerRefundId]: refund.refundId },
    });
    remaining -= amount;
    created += 1;
  }
  if (waiting.length > 0) {
    // Not remembered: Stripe's retry (or reconciliation) decides once WooCommerce kept or dropped its refund.
    log.info('card.refund_waits_for_store', { orderId, refundIds: waiting.join(',') });
    throw new CardEventTooEarlyError('Webhook Error: a refund from the WooCommerce admin is still under way; the refund is recorded once it is settled');
  }
  return created > 0 ? changed('refund_recorded') : unchanged('refund_already_recorded');
}

export const chargeRefunded = cardEventHandler({
  kind: 'charge',
  setting: 'refunds',
  apply: (orderId, event, services) => recordChargeRefunds(orderId, event.charge, services),
});
