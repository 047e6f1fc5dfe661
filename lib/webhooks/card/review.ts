/**
 * `review.opened` and `review.closed` (CARD_LIFECYCLE_EVENTS=reviews): Stripe
 * Radar held a payment for the shop to look at. Opened: the order goes
 * `on-hold`, remembering the status it had (`_status_before_review`) and the
 * review (`_review_id`), with a private note naming the reason, so nobody
 * ships it meanwhile. Closed as `approved`: the remembered status comes back,
 * unless the shop moved the order on meanwhile or a dispute holds it. Closed
 * for another reason (`refunded`, `refunded_as_fraud`, `disputed`, `redacted`,
 * …): a private note only; the refund and dispute events record what happened
 * to the money, and the order.
 *
 * Both are written as disputes are (dispute-created.ts): the note first, once
 * (shop-note.ts), then the status with the review's meta and the event's
 * receipt in one update, so a retry after a lost answer changes nothing. The
 * review keys are replaced, not appended: WooCommerce keeps one entry per key,
 * and a second review of the order must read as that review, not the first.
 */
import type { ReviewFacts } from '@/lib/card/events';
import { CardEventTooEarlyError } from '@/lib/errors';
import { META } from '@/lib/orders/meta-keys';
import { buildOrderUpdate } from '@/lib/orders/mutation';
import { metaValue } from '@/lib/orders/normalize';
import { shopNotes } from '@/lib/orders/notes';
import { isPaid } from '@/lib/orders/payable';
import { hasReceipt } from '@/lib/orders/receipts';
import { ORDER_STATUS } from '@/lib/order-statuses';
import type { Services } from '@/lib/services';
import type { StoreOrder } from '@/lib/store/types';
import { concernsOtherPayment, OTHER_PAYMENT } from '@/lib/webhooks/card/duplicate-payment';
import { DUPLICATE_EVENT } from '@/lib/webhooks/card/exactly-once';
import { cardEventHandler, changed, unchanged, type CardOutcome } from '@/lib/webhooks/card/handler';
import { awaitsCapturedPayment } from '@/lib/webhooks/card/payment-authorized';
import { addShopNoteOnce } from '@/lib/webhooks/card/shop-note';

export const REVIEW_ALREADY_RECORDED = 'review_already_recorded';

const CLOSED_DISPUTE_STATUSES = new Set(['won', 'lost', 'warning_closed', 'prevented']);

/** A dispute opened on the order and not closed: its hold outlives the review's. */
function disputeHolds(order: StoreOrder): boolean {
  return metaValue(order, META.disputeId) !== undefined && !CLOSED_DISPUTE_STATUSES.has(metaValue(order, META.disputeStatus) ?? '');
}

export async function openReview(orderId: number, eventId: string, review: ReviewFacts, services: Services): Promise<CardOutcome> {
  const store = services.store();
  const order = await store.getOrder(orderId);
  // Opened already, or closed already (a close that came first): either way nothing to hold.
  if (metaValue(order, META.reviewId) === review.reviewId) return unchanged(REVIEW_ALREADY_RECORDED);
  if (hasReceipt(order, eventId)) return unchanged(DUPLICATE_EVENT);
  // Held before the payment is recorded, the order would no longer be pending and the payment would be
  // refused as `not_pending`: the review waits for the payment, as a dispute does. An authorization
  // waiting for its capture (STRIPE_CAPTURE other than automatic) is the payment Radar flags: it is
  // recorded at once, so the order is not captured and shipped while the review is open (heldForCapture).
  const authorized = !isPaid(order) && awaitsCapturedPayment(order);
  if (!isPaid(order) && !authorized) {
    throw new CardEventTooEarlyError('Webhook Error: the order is not paid yet; the review is recorded once the payment is');
  }
  // An authorization's payment is the intent checkout stored; a paid order's, the one its payment recorded.
  if (authorized ? review.intentId !== metaValue(order, META.paymentIntentId) : concernsOtherPayment(orderId, order, review, 'review')) {
    return unchanged(OTHER_PAYMENT);
  }

  await addShopNoteOnce(store, orderId, shopNotes.reviewOpened(review.reviewId, review.openedReason, order.status));
  await store.updateOrder(
    orderId,
    buildOrderUpdate(order, {
      status: ORDER_STATUS.onHold,
      meta: { [META.reviewId]: review.reviewId, [META.statusBeforeReview]: order.status, [META.reviewClosedReason]: '' },
      metaMode: 'replace',
      receipt: eventId,
    }),
  );
  return changed('review_on_hold');
}

export async function closeReview(orderId: number, eventId: string, review: ReviewFacts, services: Services): Promise<CardOutcome> {
  const store = services.store();
  const order = await store.getOrder(orderId);
  if (isPaid(order) && concernsOtherPayment(orderId, order, review, 'review')) return unchanged(OTHER_PAYMENT);
  const sameReview = metaValue(order, META.reviewId) === review.reviewId;
  if (sameReview && metaValue(order, META.reviewClosedReason) !== undefined) return unchanged(REVIEW_ALREADY_RECORDED);
  if (hasReceipt(order, eventId)) return unchanged(DUPLICATE_EVENT);

  const reason = review.closedReason ?? 'other';
  if (reason !== 'approved') {
    // Recorded with the review's id, so an opening delivered after it does not hold the order.
    await addShopNoteOnce(store, orderId, shopNotes.reviewClosed(review.reviewId, reason));
    await store.updateOrder(
      orderId,
      buildOrderUpdate(order, {
        meta: { [META.reviewId]: review.reviewId, [META.reviewClosedReason]: reason },
        metaMode: 'replace',
        receipt: eventId,
      }),
    );
    return changed('review_closed_noted');
  }

  // An approval restores what the opening remembered: without it there is nothing to restore yet.
  if (!sameReview) throw new CardEventTooEarlyError('Webhook Error: the review is not recorded on the order yet');
  const previous = metaValue(order, META.statusBeforeReview);
  const restore = order.status === ORDER_STATUS.onHold && !disputeHolds(order) && previous !== ORDER_STATUS.onHold ? previous : undefined;
  await addShopNoteOnce(store, orderId, shopNotes.reviewApproved(review.reviewId, restore));
  await store.updateOrder(
    orderId,
    buildOrderUpdate(order, {
      ...(restore ? { status: restore } : {}),
      meta: { [META.reviewClosedReason]: reason },
      metaMode: 'replace',
      receipt: eventId,
    }),
  );
  return changed(restore ? 'review_approved_restored' : 'review_approved_noted');
}

export const reviewOpened = cardEventHandler({
  kind: 'review',
  setting: 'reviews',
  apply: (orderId, event, services) => openReview(orderId, event.id, event.review, services),
});

export const reviewClosed = cardEventHandler({
  kind: 'review',
  setting: 'reviews',
  apply: (orderId, event, services) => closeReview(orderId, event.id, event.review, services),
});
