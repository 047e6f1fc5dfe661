// The events after a payment (docs/contract.md#payment-life, #order-writes): refunds recorded once, an open review or
// dispute a hold, a fraud warning or a dispute's funds a private note that is its own record.
import type { CardEventOf } from '@/lib/card/events';
import { CardEventTooEarlyError } from '@/lib/errors';
import { log } from '@/lib/log';
import { chargeableAmount, formatMinorUnits, toMinorUnits } from '@/lib/money';
import { META } from '@/lib/orders/meta-keys';
import { shopNotes } from '@/lib/orders/notes';
import { currentPaymentState, isPaid } from '@/lib/orders/order-payment';
import { isUnsettled, MONEY_RETURNED_STATUSES, refundLink } from '@/lib/orders/refund-link';
import { addShopNoteOnce } from '@/lib/orders/shop-note';
import type { Services } from '@/lib/services';
import { applyTransition, changed, isOtherPayment, OTHER_PAYMENT, statusSentence, unchanged } from '@/lib/card-payments/transition';
import type { CardOutcome } from '@/lib/card-payments/transition';

/** What remains when Stripe moved it rounded to its steps (12.345 for 12.350), else Stripe's. */
function recordedAmount(stripeAmount: number, remaining: number, currency: string): number {
  return stripeAmount !== remaining && chargeableAmount(remaining, currency) === stripeAmount ? remaining : stripeAmount;
}

/**
 * charge.refunded: each Stripe refund recorded once as a WooCommerce refund, `api_refund: false`
 * (docs/contract.md#admin-refunds-exactly-once). The refunds are listed from Stripe: API 2022-11-15 dropped them from the event.
 */
export async function chargeRefunded(orderId: number, event: CardEventOf<'charge'>, services: Services): Promise<CardOutcome> {
  const { charge } = event;
  const store = services.store();
  const order = await store.getOrder(orderId);
  const state = currentPaymentState(order);
  // Money the order received, paid or held for a mismatch, is what a refund can record; before it, Stripe retries.
  if (!isPaid(order) && !state.paid && !state.mismatch) {
    throw new CardEventTooEarlyError('Webhook Error: the order is not paid yet; the refund is recorded once the payment is');
  }
  if (isOtherPayment(order, charge, 'refund', state)) return unchanged(OTHER_PAYMENT);

  const refunds = await (await services.card()).listChargeRefunds(charge.chargeId);
  const existing = await store.listRefunds(orderId);
  const currency = order.currency.toUpperCase();
  const now = Date.now();
  const minor = (refund: { amount: string }) => toMinorUnits(refund.amount, currency);
  let remaining = toMinorUnits(order.total, currency) - existing.reduce((sum, refund) => sum + minor(refund), 0);
  const droppable = existing.filter((refund) => isUnsettled(refund, now)).reduce((sum, refund) => sum + minor(refund), 0);

  let created = 0;
  const waiting: string[] = [];
  for (const refund of refunds) {
    if (!MONEY_RETURNED_STATUSES.has(refund.status)) continue;
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

const UNDONE_STATUSES: ReadonlySet<string> = new Set(['failed', 'canceled']);

/**
 * charge.refund.updated and refund.updated: a refund that failed or was canceled has its WooCommerce refund removed
 * (docs/contract.md#admin-refunds-exactly-once). The note goes first, so a delete whose answer was lost leaves nothing undone.
 */
export async function refundUpdated(orderId: number, event: CardEventOf<'refund'>, services: Services): Promise<CardOutcome> {
  const { refund } = event;
  if (!UNDONE_STATUSES.has(refund.status)) return unchanged('refund_not_recorded');
  const store = services.store();
  const link = refundLink(refund, await store.listRefunds(orderId), refund.currency);
  if (link.kind === 'orphaned' || link.kind === 'unrecorded') return unchanged('refund_not_recorded');
  if (link.kind === 'in_flight') {
    throw new CardEventTooEarlyError('Webhook Error: the refund from the WooCommerce admin is still under way; it is removed once it is settled');
  }
  await addShopNoteOnce(store, orderId, shopNotes.refundRemoved(refund.refundId, refund.status));
  await store.deleteRefund(orderId, link.by.id);
  return changed('refund_removed');
}

function disputeAmount(dispute: CardEventOf<'dispute'>['dispute']): string {
  return `${formatMinorUnits(dispute.amount, dispute.currency)} ${dispute.currency.toUpperCase()}`;
}

/** charge.dispute.created and .closed: an open dispute is a hold; a private note each time. */
export const recordDispute = (closed: boolean) =>
  async function (orderId: number, event: CardEventOf<'dispute'>, services: Services): Promise<CardOutcome> {
    const { dispute } = event;
    const order = await services.store().getOrder(orderId);
    if (isOtherPayment(order, dispute, 'dispute')) return unchanged(OTHER_PAYMENT);
    const lost = dispute.status === 'lost';
    const fact = {
      kind: closed ? ('dispute_closed' as const) : ('dispute_opened' as const),
      disputeId: dispute.disputeId,
      intentId: dispute.intentId ?? '',
      chargeId: dispute.chargeId,
      status: dispute.status,
    };
    const recorded = await applyTransition(order, fact, services, (transition) => ({
      shopNote: !closed
        ? shopNotes.disputeOpened(dispute.disputeId, dispute.reason, disputeAmount(dispute), statusSentence(order, transition))
        : lost
          ? shopNotes.disputeLost(dispute.disputeId)
          : shopNotes.disputeWon(dispute.disputeId, dispute.status, statusSentence(order, transition)),
      // Shown in the admin's custom fields: the dispute last heard of and its status.
      meta: { [META.disputeId]: dispute.disputeId, [META.disputeStatus]: dispute.status },
      metaMode: 'replace',
    }));
    if (recorded.outcome !== 'applied') return unchanged('dispute_already_recorded');
    if (!closed) return changed('dispute_on_hold');
    return changed(lost ? 'dispute_lost_failed' : 'dispute_closed_restored');
  };

/** charge.dispute.funds_withdrawn and .funds_reinstated: a private note only. */
export const noteDisputeFunds = (movement: 'withdrawn' | 'reinstated') =>
  async function (orderId: number, event: CardEventOf<'dispute'>, services: Services): Promise<CardOutcome> {
    const note = shopNotes.disputeFunds(event.dispute.disputeId, movement, disputeAmount(event.dispute));
    const added = await addShopNoteOnce(services.store(), orderId, note);
    return added ? changed(`dispute_funds_${movement}_noted`) : unchanged('dispute_funds_already_noted');
  };

/** review.opened and review.closed: an open Radar review is a hold; a private note either way. */
export const recordReview = (opened: boolean) =>
  async function (orderId: number, event: CardEventOf<'review'>, services: Services): Promise<CardOutcome> {
    const { review } = event;
    const order = await services.store().getOrder(orderId);
    if (isOtherPayment(order, review, 'review')) return unchanged(OTHER_PAYMENT);
    const intentId = review.intentId ?? '';
    const reason = review.closedReason ?? 'other';
    const fact = opened
      ? { kind: 'review_opened' as const, reviewId: review.reviewId, intentId }
      : { kind: 'review_closed' as const, reviewId: review.reviewId, intentId, closedReason: reason };
    const recorded = await applyTransition(order, fact, services, (transition) => ({
      shopNote: opened
        ? shopNotes.reviewOpened(review.reviewId, review.openedReason, statusSentence(order, transition))
        : reason === 'approved'
          ? shopNotes.reviewApproved(review.reviewId, statusSentence(order, transition))
          : shopNotes.reviewClosed(review.reviewId, reason, statusSentence(order, transition)),
      // Shown in the admin's custom fields: the review last heard of.
      meta: { [META.reviewId]: review.reviewId, [META.reviewClosedReason]: opened ? '' : reason },
      metaMode: 'replace',
    }));
    if (recorded.outcome !== 'applied') return unchanged('review_already_recorded');
    if (opened) return changed('review_on_hold');
    if (reason !== 'approved') return changed('review_closed_noted');
    return changed(recorded.status ? 'review_approved_restored' : 'review_approved_noted');
  };

/** radar.early_fraud_warning.created: a private note with Stripe's advice; the status is the shop's to change. */
export async function fraudWarningCreated(orderId: number, event: CardEventOf<'fraud_warning'>, services: Services): Promise<CardOutcome> {
  const store = services.store();
  const { warning } = event;
  const order = await store.getOrder(orderId);
  if (isOtherPayment(order, warning, 'fraud warning')) return unchanged(OTHER_PAYMENT);
  const note = shopNotes.earlyFraudWarning(warning.warningId, warning.chargeId, warning.fraudType, warning.actionable);
  return (await addShopNoteOnce(store, orderId, note)) ? changed('fraud_warning_noted') : unchanged('fraud_warning_already_noted');
}
