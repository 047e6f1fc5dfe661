/**
 * Disputes (CARD_LIFECYCLE_EVENTS=disputes): a cardholder's chargeback.
 *
 * - `charge.dispute.created`: the order goes `on-hold`, remembering the status
 *   it had (`_status_before_dispute`) and the dispute (`_dispute_id`), with a
 *   private note for the shop (not a customer note: the customer is not told).
 * - `charge.dispute.closed`: `lost` sets `failed`; any other outcome (`won`,
 *   `warning_closed`, `prevented`) restores the remembered status, unless the
 *   shop changed the status meanwhile; a note either way; `_dispute_status`.
 * - `charge.dispute.funds_withdrawn` / `funds_reinstated`: a note only.
 *
 * Out of order: a dispute on an order whose payment is not recorded yet, or a
 * close before its open was applied, is answered 400 so Stripe delivers it
 * again later. The same dispute seen again under another event id changes
 * nothing (the order's `_dispute_id` / `_dispute_status` say it was applied).
 *
 * The note is written before the status: a failed status write is retried
 * and may repeat the note, but never loses it.
 */
import type { DisputeFacts } from '@/lib/card/events';
import { formatMinorUnits } from '@/lib/money';
import { META } from '@/lib/orders/meta-keys';
import { buildOrderUpdate } from '@/lib/orders/mutation';
import { metaValue } from '@/lib/orders/normalize';
import { shopNotes } from '@/lib/orders/notes';
import { isPaid } from '@/lib/orders/payable';
import type { Services } from '@/lib/services';
import { cardEventHandler, CardEventTooEarlyError } from '@/lib/webhooks/card/handler';

const ON_HOLD = 'on-hold';

function amountOf(dispute: DisputeFacts): string {
  return `${formatMinorUnits(dispute.amount, dispute.currency)} ${dispute.currency.toUpperCase()}`;
}

export async function openDispute(orderId: number, dispute: DisputeFacts, services: Services): Promise<string> {
  const store = services.store();
  const order = await store.getOrder(orderId);
  if (metaValue(order, META.disputeId) === dispute.disputeId) return 'dispute_already_recorded';
  if (!isPaid(order)) throw new CardEventTooEarlyError('Webhook Error: the order is not paid yet; the dispute is recorded once the payment is');

  await store.addPrivateNote(orderId, shopNotes.disputeOpened(dispute.disputeId, dispute.reason, amountOf(dispute), order.status));
  await store.updateOrder(
    orderId,
    buildOrderUpdate(order, {
      status: ON_HOLD,
      meta: { [META.disputeId]: dispute.disputeId, [META.statusBeforeDispute]: order.status, [META.disputeStatus]: dispute.status },
      metaMode: 'append',
    }),
  );
  return 'dispute_on_hold';
}

export async function closeDispute(orderId: number, dispute: DisputeFacts, services: Services): Promise<string> {
  const store = services.store();
  const order = await store.getOrder(orderId);
  if (metaValue(order, META.disputeId) !== dispute.disputeId) {
    throw new CardEventTooEarlyError('Webhook Error: the dispute is not recorded on the order yet');
  }
  const recordedStatus = metaValue(order, META.disputeStatus);
  if (recordedStatus === 'won' || recordedStatus === 'lost' || recordedStatus === 'warning_closed' || recordedStatus === 'prevented') {
    return 'dispute_already_recorded';
  }

  const lost = dispute.status === 'lost';
  const previous = metaValue(order, META.statusBeforeDispute);
  // The shop may have moved the order on while the dispute was open: a win leaves that alone.
  const restore = !lost && order.status === ON_HOLD ? previous : undefined;
  await store.addPrivateNote(
    orderId,
    lost ? shopNotes.disputeLost(dispute.disputeId) : shopNotes.disputeWon(dispute.disputeId, dispute.status, restore),
  );
  const status = lost ? 'failed' : restore;
  await store.updateOrder(
    orderId,
    buildOrderUpdate(order, {
      ...(status ? { status } : {}),
      meta: { [META.disputeStatus]: dispute.status },
      metaMode: 'append',
    }),
  );
  return lost ? 'dispute_lost_failed' : 'dispute_closed_restored';
}

async function noteFunds(orderId: number, dispute: DisputeFacts, movement: 'withdrawn' | 'reinstated', services: Services): Promise<string> {
  await services.store().addPrivateNote(orderId, shopNotes.disputeFunds(dispute.disputeId, movement, amountOf(dispute)));
  return `dispute_funds_${movement}_noted`;
}

export const disputeCreated = cardEventHandler({
  kind: 'dispute',
  setting: 'disputes',
  apply: (orderId, event, services) => openDispute(orderId, event.dispute, services),
});

export const disputeClosed = cardEventHandler({
  kind: 'dispute',
  setting: 'disputes',
  apply: (orderId, event, services) => closeDispute(orderId, event.dispute, services),
});

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
