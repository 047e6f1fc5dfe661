/**
 * `charge.dispute.created` (CARD_LIFECYCLE_EVENTS=disputes): a cardholder's
 * chargeback. The order goes `on-hold`, remembering the status it had
 * (`_status_before_dispute`) and the dispute (`_dispute_id`), with a private
 * note for the shop (not a customer note: the customer is not told).
 *
 * On an order whose payment is not recorded yet: 400, for Stripe to retry. The
 * same dispute under another event id changes nothing. The note is written
 * before the status, once (shop-note.ts): a failed status write is retried,
 * finds the note and writes the status. `_dispute_id` and the event's receipt
 * travel in the status write, so a retry after it landed changes nothing.
 */
import type { DisputeFacts } from '@/lib/card/events';
import { CardEventTooEarlyError } from '@/lib/errors';
import { META } from '@/lib/orders/meta-keys';
import { buildOrderUpdate } from '@/lib/orders/mutation';
import { metaValue } from '@/lib/orders/normalize';
import { shopNotes } from '@/lib/orders/notes';
import { isPaid } from '@/lib/orders/payable';
import { ORDER_STATUS } from '@/lib/order-statuses';
import type { Services } from '@/lib/services';
import { disputeAmount } from '@/lib/webhooks/card/dispute';
import { concernsOtherPayment, OTHER_PAYMENT } from '@/lib/webhooks/card/duplicate-payment';
import { hasReceipt } from '@/lib/orders/receipts';
import { DUPLICATE_EVENT } from '@/lib/webhooks/card/exactly-once';
import { cardEventHandler, changed, unchanged, type CardOutcome } from '@/lib/webhooks/card/handler';
import { addShopNoteOnce } from '@/lib/webhooks/card/shop-note';

export async function openDispute(orderId: number, eventId: string, dispute: DisputeFacts, services: Services): Promise<CardOutcome> {
  const store = services.store();
  const order = await store.getOrder(orderId);
  if (metaValue(order, META.disputeId) === dispute.disputeId) return unchanged('dispute_already_recorded');
  if (hasReceipt(order, eventId)) return unchanged(DUPLICATE_EVENT);
  if (!isPaid(order)) throw new CardEventTooEarlyError('Webhook Error: the order is not paid yet; the dispute is recorded once the payment is');
  if (concernsOtherPayment(orderId, order, dispute, 'dispute')) return unchanged(OTHER_PAYMENT);

  await addShopNoteOnce(store, orderId, shopNotes.disputeOpened(dispute.disputeId, dispute.reason, disputeAmount(dispute), order.status));
  await store.updateOrder(
    orderId,
    buildOrderUpdate(order, {
      status: ORDER_STATUS.onHold,
      meta: { [META.disputeId]: dispute.disputeId, [META.statusBeforeDispute]: order.status, [META.disputeStatus]: dispute.status },
      metaMode: 'append',
      receipt: eventId,
    }),
  );
  return changed('dispute_on_hold');
}

export const disputeCreated = cardEventHandler({
  kind: 'dispute',
  setting: 'disputes',
  apply: (orderId, event, services) => openDispute(orderId, event.id, event.dispute, services),
});

