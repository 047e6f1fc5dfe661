// charge.dispute.funds_withdrawn and .funds_reinstated: a private note only, its own record (docs/contract.md#order-writes).
import type { DisputeFacts } from '@/lib/card/events';
import { shopNotes } from '@/lib/orders/notes';
import type { Services } from '@/lib/services';
import { disputeAmount } from '@/lib/webhooks/card/dispute';
import { cardEventHandler, changed, unchanged, type CardOutcome } from '@/lib/webhooks/card/handler';
import { addShopNoteOnce } from '@/lib/orders/shop-note';

async function noteFunds(orderId: number, dispute: DisputeFacts, movement: 'withdrawn' | 'reinstated', services: Services): Promise<CardOutcome> {
  const added = await addShopNoteOnce(services.store(), orderId, shopNotes.disputeFunds(dispute.disputeId, movement, disputeAmount(dispute)));
  return added ? changed(`dispute_funds_${movement}_noted`) : unchanged('dispute_funds_already_noted');
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
