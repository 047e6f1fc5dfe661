// charge.refund.updated and refund.updated: a refund that failed or was canceled has its WooCommerce refund removed
// (docs/contract.md#admin-refunds-exactly-once). The note goes first, so a delete whose answer was lost leaves nothing undone.
import type { RefundEventFacts } from '@/lib/card/events';
import { CardEventTooEarlyError } from '@/lib/errors';
import { toMinorUnits } from '@/lib/money';
import { shopNotes } from '@/lib/orders/notes';
import type { Services } from '@/lib/services';
import { cardEventHandler, changed, unchanged, type Changed, type Unchanged } from '@/lib/webhooks/card/handler';
import { isUnsettled, movesStoreAmount, providerRefundIdOf } from '@/lib/orders/refund-link';
import { addShopNoteOnce } from '@/lib/orders/shop-note';

const UNDONE_STATUSES: ReadonlySet<string> = new Set(['failed', 'canceled']);

export type RefundUpdatedOutcome = Changed<'refund_removed'> | Unchanged<'refund_not_recorded'>;

export async function removeUndoneRefund(orderId: number, refund: RefundEventFacts, services: Services): Promise<RefundUpdatedOutcome> {
  if (!UNDONE_STATUSES.has(refund.status)) return unchanged('refund_not_recorded');
  const store = services.store();
  const recorded = await store.listRefunds(orderId);
  const match =
    recorded.find((r) => providerRefundIdOf(r) === refund.refundId) ??
    recorded.find(
      (r) =>
        r.id === refund.storeRefundId &&
        providerRefundIdOf(r) === undefined &&
        movesStoreAmount(refund.amount, toMinorUnits(r.amount, refund.currency), refund.currency),
    );
  if (!match) return unchanged('refund_not_recorded');
  if (isUnsettled(match)) {
    throw new CardEventTooEarlyError('Webhook Error: the refund from the WooCommerce admin is still under way; it is removed once it is settled');
  }
  await addShopNoteOnce(store, orderId, shopNotes.refundRemoved(refund.refundId, refund.status));
  await store.deleteRefund(orderId, match.id);
  return changed('refund_removed');
}

export const refundUpdated = cardEventHandler({
  kind: 'refund',
  setting: 'refunds',
  apply: (orderId, event, services) => removeUndoneRefund(orderId, event.refund, services),
});
