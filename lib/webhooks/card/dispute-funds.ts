/**
 * `charge.dispute.funds_withdrawn` and `charge.dispute.funds_reinstated`
 * (CARD_LIFECYCLE_EVENTS=disputes): money moving because of a dispute. A
 * private note only; the two types share this file as they differ by a word.
 */
import type { DisputeFacts } from '@/lib/card/events';
import { shopNotes } from '@/lib/orders/notes';
import type { Services } from '@/lib/services';
import { disputeAmount } from '@/lib/webhooks/card/dispute';
import { cardEventHandler } from '@/lib/webhooks/card/handler';

async function noteFunds(orderId: number, dispute: DisputeFacts, movement: 'withdrawn' | 'reinstated', services: Services): Promise<string> {
  await services.store().addPrivateNote(orderId, shopNotes.disputeFunds(dispute.disputeId, movement, disputeAmount(dispute)));
  return `dispute_funds_${movement}_noted`;
}

export const disputeFundsWithdrawn = cardEventHandler({
  kind: 'dispute',
  setting: 'disputes',
  apply: (orderId, event, services) => noteFunds(orderId, event.dispute, 'withdrawn', services),
});

export const disputeFundsReinstated = cardEventHandler({
  kind: 'dispute',
  setting: 'disputes',
  apply: (orderId, event, services) => noteFunds(orderId, event.dispute, 'reinstated', services),
});
