// charge.dispute.created and .closed (docs/contract.md#payment-life): an open dispute is a hold; a private note each time.
import type { DisputeFacts } from '@/lib/card/events';
import { shopNotes } from '@/lib/orders/notes';
import type { Services } from '@/lib/services';
import { disputeAmount } from '@/lib/webhooks/card/dispute';
import { OTHER_PAYMENT } from '@/lib/webhooks/card/duplicate-payment';
import { cardEventHandler, changed, unchanged, type CardOutcome } from '@/lib/webhooks/card/handler';
import { currentPaymentState } from '@/lib/orders/order-payment';
import { applyTransition, isOtherPayment, statusSentence } from '@/lib/webhooks/card/transition';
import { META } from '@/lib/orders/meta-keys';

async function recordDispute(orderId: number, dispute: DisputeFacts, services: Services, closed: boolean): Promise<CardOutcome> {
  const order = await services.store().getOrder(orderId);
  const state = currentPaymentState(order);
  if (isOtherPayment(order, state, dispute, 'dispute')) return unchanged(OTHER_PAYMENT);
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
}

export const disputeCreated = cardEventHandler({
  kind: 'dispute',
  setting: 'disputes',
  apply: (orderId, event, services) => recordDispute(orderId, event.dispute, services, false),
});

export const disputeClosed = cardEventHandler({
  kind: 'dispute',
  setting: 'disputes',
  apply: (orderId, event, services) => recordDispute(orderId, event.dispute, services, true),
});
