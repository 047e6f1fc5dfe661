// review.opened and review.closed (docs/contract.md#payment-life): an open Radar review is a hold; a private note either way.
import type { ReviewFacts } from '@/lib/card/events';
import { META } from '@/lib/orders/meta-keys';
import { shopNotes } from '@/lib/orders/notes';
import type { Services } from '@/lib/services';
import { OTHER_PAYMENT } from '@/lib/webhooks/card/duplicate-payment';
import { cardEventHandler, changed, unchanged, type CardOutcome } from '@/lib/webhooks/card/handler';
import { currentPaymentState } from '@/lib/orders/order-payment';
import { applyTransition, isOtherPayment, statusSentence } from '@/lib/webhooks/card/transition';

export const REVIEW_ALREADY_RECORDED = 'review_already_recorded';

async function recordReview(orderId: number, review: ReviewFacts, services: Services, opened: boolean): Promise<CardOutcome> {
  const order = await services.store().getOrder(orderId);
  const state = currentPaymentState(order);
  if (isOtherPayment(order, state, review, 'review')) return unchanged(OTHER_PAYMENT);
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
  if (recorded.outcome !== 'applied') return unchanged(REVIEW_ALREADY_RECORDED);
  if (opened) return changed('review_on_hold');
  if (reason !== 'approved') return changed('review_closed_noted');
  return changed(recorded.status ? 'review_approved_restored' : 'review_approved_noted');
}

export const reviewOpened = cardEventHandler({
  kind: 'review',
  setting: 'reviews',
  apply: (orderId, event, services) => recordReview(orderId, event.review, services, true),
});

export const reviewClosed = cardEventHandler({
  kind: 'review',
  setting: 'reviews',
  apply: (orderId, event, services) => recordReview(orderId, event.review, services, false),
});
