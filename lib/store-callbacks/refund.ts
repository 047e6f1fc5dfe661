// POST /api/store/refunds: the admin's "Refund via Credit Card", exactly once (docs/contract.md#admin-refunds-exactly-once,
// docs/decisions.md#d22). WooCommerce saves its refund before calling the plugin, so its amount is read from the store.
import type { RefundFacts } from '@/lib/card/events';
import { MoneyError, StoreCallbackRefusedError } from '@/lib/errors';
import { log, type RequestContext } from '@/lib/log';
import { chargeableAmount, formatMinorUnits, toMinorUnits } from '@/lib/money';
import type { Services } from '@/lib/services';
import type { StoreOrder } from '@/lib/store/types';
import { isPaid, paidIntentId } from '@/lib/orders/order-payment';
import { orderIntent, refusedInPlainWords, withCallbackOrder } from '@/lib/card-payments/authorization';
import type { StoreRefundRequest } from '@/lib/store-callbacks/schemas';
import { requestTimeLeftMs, withRequestDeadline } from '@/lib/upstream/budget';
import { MONEY_RETURNED_STATUSES, refundLink } from '@/lib/orders/refund-link';

export const ADOPTION_WINDOW_S = 24 * 60 * 60;

/** The plugin waits 20 s for an answer (store-callbacks.php); 5 s are left for the network and the route around this. */
export const STORE_REFUND_ANSWER_MS = 15_000;

/** Stripe keeps a key 24 hours (the metadata lookup covers later); the amount is in it as a store may reuse a refund id. */
export function refundIdempotencyKey(orderId: number, storeRefundId: number, amount: number): string {
  return `store-refund-${orderId}-${storeRefundId}-${amount}`;
}

function amountIn(currency: string, decimal: string): number {
  try {
    return toMinorUnits(decimal, currency);
  } catch (error) {
    if (error instanceof MoneyError) throw new StoreCallbackRefusedError('The refund amount is not a valid amount.');
    throw error;
  }
}

/** The amount: a decimal string in the order's currency, what Stripe moved. */
function answerOf(refund: RefundFacts, currency: string): { refund_id: string; amount: string } {
  if (!MONEY_RETURNED_STATUSES.has(refund.status)) {
    throw new StoreCallbackRefusedError(`Stripe could not complete this refund (${refund.status}).`, { refundId: refund.refundId });
  }
  return { refund_id: refund.refundId, amount: formatMinorUnits(refund.amount, currency) };
}

/** Three-decimal currencies move in steps of 10 (docs/contract.md#three-decimal-refunds). */
function amountToMove(amount: number, currency: string, leavesNothing: boolean): number {
  const rounded = chargeableAmount(amount, currency);
  if (rounded === amount || leavesNothing) return rounded;
  const lower = amount - (amount % 10);
  throw new StoreCallbackRefusedError(
    `Stripe refunds ${currency} in steps of ${formatMinorUnits(10, currency)}: refund ${formatMinorUnits(lower, currency)} or ` +
      `${formatMinorUnits(lower + 10, currency)} ${currency} (only the refund of all that remains may end in other digits).`,
  );
}

export function refundFromStore(input: StoreRefundRequest, services: Services, context: RequestContext) {
  // A deadline of its own, lock wait included: the answer must reach the plugin before it gives up.
  return withRequestDeadline(Math.min(requestTimeLeftMs(), STORE_REFUND_ANSWER_MS), () =>
    withCallbackOrder(input.order_id, services, context, (order) => refundUnderLock(input, order, services, context)),
  );
}

async function refundUnderLock(input: StoreRefundRequest, order: StoreOrder, services: Services, context: RequestContext) {
  const orderId = input.order_id;
  const currency = order.currency.toUpperCase();
  const intentId = paidIntentId(order);
  if (!isPaid(order) || intentId === undefined) {
    throw new StoreCallbackRefusedError(
      `Order #${orderId} was not paid by card through the service: refund the customer the way they paid and use "Refund manually".`,
    );
  }

  const storeRefunds = await services.store().listRefunds(orderId);
  const storeRefund = storeRefunds.find((refund) => refund.id === input.refund_id);
  if (!storeRefund) throw new StoreCallbackRefusedError(`Order #${orderId} has no refund #${input.refund_id} in the store.`);
  const amount = amountIn(currency, storeRefund.amount);
  if (amount <= 0 || amountIn(currency, input.amount) !== amount) {
    throw new StoreCallbackRefusedError(`The amount does not match refund #${input.refund_id} as the store holds it.`);
  }
  const refundedInStore = storeRefunds.reduce((sum, r) => sum + amountIn(currency, r.amount), 0);
  const moved = amountToMove(amount, currency, amountIn(currency, order.total) - refundedInStore <= 0);

  const intent = await orderIntent(order, intentId, services);
  const card = await services.card();
  const stripeRefunds = intent.chargeId === '' ? [] : await card.listChargeRefunds(intent.chargeId);
  const made = stripeRefunds.find((refund) => refund.storeRefundId === input.refund_id);
  const madeLink = made && refundLink(made, storeRefunds, currency);
  if (made && (made.amount !== moved || (madeLink?.kind === 'recorded' && madeLink.by.id !== input.refund_id))) {
    log.warn('store_callback.refund_id_reused', { orderId, storeRefundId: input.refund_id, refundId: made.refundId, made: made.amount, asked: moved });
    throw new StoreCallbackRefusedError(
      `Stripe already holds a refund of ${formatMinorUnits(made.amount, currency)} ${currency} (${made.refundId}) made for WooCommerce ` +
        `refund #${input.refund_id}, not ${formatMinorUnits(moved, currency)} ${currency}: the store used that refund number again. ` +
        'Check the payment\'s refunds in the Stripe Dashboard before refunding again.',
    );
  }
  if (made) {
    context.outcome = 'refund_already_made';
    return answerOf(made, currency);
  }

  // The first call's refund, whose WooCommerce refund was dropped after a lost answer: this click's, not a second one.
  const since = Math.floor(Date.now() / 1000) - ADOPTION_WINDOW_S;
  const orphan = stripeRefunds.find(
    (r) =>
      MONEY_RETURNED_STATUSES.has(r.status) &&
      r.amount === moved &&
      (r.created ?? 0) >= since &&
      refundLink(r, storeRefunds, currency).kind === 'orphaned',
  );
  if (orphan) {
    const adopted = await refusedInPlainWords('refund', () =>
      card.updateRefundMetadata(orphan.refundId, {
        shop_refund_id: String(input.refund_id),
        shop_refund_adopted_from: String(orphan.storeRefundId),
      }),
    );
    context.outcome = 'refund_adopted';
    log.info('store_callback.refund_adopted', { orderId, storeRefundId: input.refund_id, droppedStoreRefundId: orphan.storeRefundId, refundId: orphan.refundId });
    return answerOf(adopted, currency);
  }

  const refundedAtStripe = stripeRefunds.filter((r) => MONEY_RETURNED_STATUSES.has(r.status)).reduce((sum, r) => sum + r.amount, 0);
  const refundedBefore = refundedInStore - amount;
  if (refundedAtStripe > refundedBefore) {
    log.warn('store_callback.refund_unrecorded_at_stripe', { orderId, refundedAtStripe, refundedInStore: refundedBefore, currency });
    throw new StoreCallbackRefusedError(
      `Stripe has already refunded ${formatMinorUnits(refundedAtStripe, currency)} ${currency} of this payment, more than the ` +
        `${formatMinorUnits(refundedBefore, currency)} ${currency} the order shows. Check the payment's refunds in the Stripe Dashboard ` +
        'and wait for them to be recorded (or record them with "Refund manually") before refunding again.',
    );
  }

  const refund = await refusedInPlainWords('refund', () =>
    card.createRefund({
      intentId,
      amount: moved,
      metadata: {
        shop_order_id: String(orderId),
        shop_refund_id: String(input.refund_id),
        ...(input.reason ? { shop_refund_reason: input.reason.slice(0, 500) } : {}),
      },
      idempotencyKey: refundIdempotencyKey(orderId, input.refund_id, moved),
    }),
  );
  context.outcome = 'refund_made';
  log.info('store_callback.refund_made', { orderId, storeRefundId: input.refund_id, refundId: refund.refundId, amount: moved, currency });
  return answerOf(refund, currency);
}
