/**
 * `charge.refund.updated` and `refund.updated` (CARD_LIFECYCLE_EVENTS=refunds;
 * Stripe sends the first for some payment methods only, the second for every
 * refund, and both may come for one change): a refund that
 * failed or was canceled (bank debits can) did not return the money, so the
 * WooCommerce refund recorded for it is removed, with a private note for the
 * shop. Any other update changes nothing. Arriving before `charge.refunded`,
 * it finds nothing to remove, and `charge.refunded` then skips the failed
 * refund, since it reads the refunds' current status from the provider.
 *
 * A refund made from the WooCommerce admin is found by the Stripe id the plugin
 * keeps on its WooCommerce refund, or, before the plugin kept it, by the
 * WooCommerce refund its metadata names: removed once WooCommerce can no
 * longer drop it itself, answered 400 (retried) while it still may.
 *
 * Each part is idempotent by what it leaves in the store: the note is written
 * once (shop-note.ts) and before the delete, so a delete whose answer was lost
 * after WooCommerce carried it out leaves nothing undone (the retry finds no
 * refund to remove and the note in place), and a delete that failed is
 * retried with the note already there.
 */
import type { RefundEventFacts } from '@/lib/card/events';
import { CardEventTooEarlyError } from '@/lib/errors';
import { toMinorUnits } from '@/lib/money';
import { shopNotes } from '@/lib/orders/notes';
import type { Services } from '@/lib/services';
import { cardEventHandler, changed, unchanged, type Changed, type Unchanged } from '@/lib/webhooks/card/handler';
import { isUnsettled, movesStoreAmount, providerRefundIdOf } from '@/lib/webhooks/card/refund';
import { addShopNoteOnce } from '@/lib/webhooks/card/shop-note';

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
