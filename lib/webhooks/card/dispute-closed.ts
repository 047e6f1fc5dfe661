/**
 * `charge.dispute.closed` (CARD_LIFECYCLE_EVENTS=disputes): `lost` sets
 * `failed`; any other outcome (`won`, `warning_closed`, `prevented`) restores
 * the status remembered when it opened, unless the shop changed the status
 * meanwhile; a private note either way; `_dispute_status`.
 *
 * A close before its open was applied: 400, for Stripe to retry. A close
 * already applied (another event id) changes nothing. The note is written
 * once (shop-note.ts) before the status write, which carries `_dispute_status`
 * and the event's receipt.
 */
import type { DisputeFacts } from '@/lib/card/events';
import { CardEventTooEarlyError } from '@/lib/errors';
import { META } from '@/lib/orders/meta-keys';
import { buildOrderUpdate } from '@/lib/orders/mutation';
import { metaValue } from '@/lib/orders/normalize';
import { shopNotes } from '@/lib/orders/notes';
import { ORDER_STATUS } from '@/lib/order-statuses';
import type { Services } from '@/lib/services';
import { isPaid } from '@/lib/orders/payable';
import { concernsOtherPayment, OTHER_PAYMENT } from '@/lib/webhooks/card/duplicate-payment';
import { hasReceipt } from '@/lib/orders/receipts';
import { DUPLICATE_EVENT } from '@/lib/webhooks/card/exactly-once';
import { cardEventHandler, changed, unchanged, type CardOutcome } from '@/lib/webhooks/card/handler';
import { addShopNoteOnce } from '@/lib/webhooks/card/shop-note';

export async function closeDispute(orderId: number, eventId: string, dispute: DisputeFacts, services: Services): Promise<CardOutcome> {
  const store = services.store();
  const order = await store.getOrder(orderId);
  // Its opening was left off the order (dispute-created.ts): so is its close.
  if (isPaid(order) && concernsOtherPayment(orderId, order, dispute, 'dispute')) return unchanged(OTHER_PAYMENT);
  if (metaValue(order, META.disputeId) !== dispute.disputeId) {
    throw new CardEventTooEarlyError('Webhook Error: the dispute is not recorded on the order yet');
  }
  const recordedStatus = metaValue(order, META.disputeStatus);
  if (recordedStatus === 'won' || recordedStatus === 'lost' || recordedStatus === 'warning_closed' || recordedStatus === 'prevented') {
    return unchanged('dispute_already_recorded');
  }
  if (hasReceipt(order, eventId)) return unchanged(DUPLICATE_EVENT);

  const lost = dispute.status === 'lost';
  const previous = metaValue(order, META.statusBeforeDispute);
  // The shop may have moved the order on while the dispute was open: a win leaves that alone.
  const restore = !lost && order.status === ORDER_STATUS.onHold ? previous : undefined;
  await addShopNoteOnce(
    store,
    orderId,
    lost ? shopNotes.disputeLost(dispute.disputeId) : shopNotes.disputeWon(dispute.disputeId, dispute.status, restore),
  );
  const status = lost ? ORDER_STATUS.failed : restore;
  await store.updateOrder(
    orderId,
    buildOrderUpdate(order, {
      ...(status ? { status } : {}),
      meta: { [META.disputeStatus]: dispute.status },
      metaMode: 'append',
      receipt: eventId,
    }),
  );
  return changed(lost ? 'dispute_lost_failed' : 'dispute_closed_restored');
}

export const disputeClosed = cardEventHandler({
  kind: 'dispute',
  setting: 'disputes',
  apply: (orderId, event, services) => closeDispute(orderId, event.id, event.dispute, services),
});

