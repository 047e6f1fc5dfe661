// A card event as a transition of the payment model (docs/decisions.md#d32): the facts, the status and the effects in one
// update; and what every card handler shares (its outcome, the check that an event is about another payment).
import { log } from '@/lib/log';
import { META } from '@/lib/orders/meta-keys';
import { buildOrderUpdate, type OrderChange } from '@/lib/orders/mutation';
import { metaValue } from '@/lib/orders/normalize';
import { currentPaymentState, duplicatePaymentOf, isPaid } from '@/lib/orders/order-payment';
import {
  applyFact,
  nextStatus,
  PAYMENT_STATE_META,
  type FactOutcome,
  type PaymentFact,
  type PaymentState,
  paymentsOf,
  holdsOf,
} from '@/lib/orders/payment-state';
import { holdName, shopNotes } from '@/lib/orders/notes';
import { ORDER_STATUS } from '@/lib/order-statuses';
import type { Services } from '@/lib/services';
import { StoreError } from '@/lib/errors';
import type { StoreOrder } from '@/lib/store/types';
import { addShopNoteOnce } from '@/lib/orders/shop-note';
import { sendCustomerMessage } from '@/lib/orders/customer-message';

/** The handler that decides says whether it wrote the order, so no list elsewhere has to know which names did. */
export interface CardOutcome {
  readonly name: string;
  readonly changedOrder: boolean;
}

export const changed = (name: string): CardOutcome => ({ name, changedOrder: true });
export const unchanged = (name: string): CardOutcome => ({ name, changedOrder: false });

export const OTHER_PAYMENT = 'other_payment';
export const DUPLICATE_EVENT = 'duplicate_event';

/** The facts after the event and the status they lead to (undefined: unchanged). */
interface Transition {
  after: PaymentState;
  status: string | undefined;
}

type TransitionEffects = Omit<OrderChange, 'status'> & { shopNote?: string | undefined };

export async function applyTransition(
  order: StoreOrder,
  fact: PaymentFact,
  services: Services,
  effects: (transition: Transition) => TransitionEffects = () => ({}),
): Promise<{ outcome: FactOutcome; status: string | undefined }> {
  const before = currentPaymentState(order);
  const applied = applyFact(before, fact);
  if (applied.outcome !== 'applied') return { outcome: applied.outcome, status: undefined };
  const next = nextStatus(order.status, before, applied.state, { authorizedStatus: services.config.capture === 'on_shipment' });
  const { shopNote, ...effectChange } = effects({ after: next.state, status: next.status });
  const store = services.store();
  if (shopNote) await addShopNoteOnce(store, order.id, shopNote);
  const change = await sendCustomerMessage(store, order, effectChange, services.config.customerMessages);
  const write = (status: string | undefined) =>
    store.updateOrder(
      order.id,
      buildOrderUpdate(order, {
        ...change,
        ...(status ? { status } : {}),
        metaValues: { ...change.metaValues, [PAYMENT_STATE_META]: JSON.stringify(next.state) },
      }),
    );
  try {
    await write(next.status);
  } catch (error) {
    // A store without the companion plugin's `authorized` status refuses it before changing anything.
    if (next.status !== ORDER_STATUS.authorized || !(error instanceof StoreError) || error.code !== 'rest_invalid_param') throw error;
    log.warn('store.authorized_status_missing', { orderId: order.id, action: 'update the Checkout Bridge plugin (1.3 or later) so authorized orders reach ShipStation' });
    await write(ORDER_STATUS.onHold);
    return { outcome: 'applied', status: ORDER_STATUS.onHold };
  }
  return { outcome: 'applied', status: next.status };
}

/**
 * E.g. the refund of a duplicate: it says nothing of the order's own payment, so it is only logged. Never on an order
 * not paid yet: a payment it does not show yet is still its own.
 */
export function isOtherPayment(
  order: StoreOrder,
  payment: { intentId: string | undefined; chargeId: string },
  what: 'refund' | 'dispute' | 'review' | 'fraud warning',
  state = currentPaymentState(order),
): boolean {
  if (payment.intentId && paymentsOf(state, metaValue(order, META.paymentIntentId)).has(payment.intentId)) return false;
  if (!isPaid(order) && !state.paid) return false;
  const other = duplicatePaymentOf(order, { intentId: payment.intentId ?? '', chargeId: payment.chargeId });
  if (other === undefined) return false;
  log.warn('card.other_payment_event', {
    orderId: order.id,
    kind: what,
    intentId: payment.intentId,
    chargeId: payment.chargeId || undefined,
    paidIntentId: other.paidIntentId,
    action: 'nothing recorded on the order: this payment is not the one that paid it',
  });
  return true;
}

export function statusSentence(order: StoreOrder, transition: Transition): string {
  return shopNotes.statusSentence(order.status, transition.status ?? order.status, [...holdsOf(transition.after)].map(holdName));
}
