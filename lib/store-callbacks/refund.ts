/**
 * POST /api/store/refunds: a refund clicked in the WooCommerce admin ("Refund
 * via Credit Card"), called by the companion plugin's gateway from
 * WooCommerce's process_refund.
 *
 * WooCommerce saves its refund before it asks the gateway, and deletes it when
 * the gateway answers an error. So the WooCommerce refund named in the call
 * exists when the call arrives: its amount, read from the store, is the one
 * refunded (the body's must agree), in the order's own currency.
 *
 * The Stripe refund carries the order and the WooCommerce refund in its
 * metadata, and its idempotency key is derived from them: a retry of the same
 * WooCommerce refund (the plugin retries a call whose answer was lost) finds
 * the refund already made, at Stripe's key or, after Stripe forgot the key,
 * in the charge's refunds. The later `charge.refunded` recognises it by that
 * metadata and records nothing (lib/webhooks/card/refund.ts).
 *
 * A retry after a lost answer: WooCommerce deleted the refund the first call
 * named (the plugin gave up), and the shop owner clicks Refund again, which
 * makes a new WooCommerce refund. A Stripe refund of the same amount on this
 * payment, made within ADOPTION_WINDOW_S, that names a WooCommerce refund no
 * longer there (and that no WooCommerce refund records) is adopted: its
 * metadata is made to name the new refund, before the answer, so
 * `charge.refunded` sees it recorded, and it is answered instead of refunding
 * again. A WooCommerce refund id that a Stripe refund of another amount
 * already names (the store handed the id out again) is refused.
 *
 * One guard against refunding twice: when Stripe has refunded more of the
 * payment than WooCommerce shows (a refund made in the Stripe Dashboard whose
 * event is not recorded yet), a new refund is refused with what to check,
 * instead of paying the customer back twice.
 *
 * Three-decimal currencies move in steps of 10 thousandths, as they are
 * charged (lib/money.ts, chargeableAmount): a refund must be such a multiple,
 * except the one that leaves nothing to refund in WooCommerce, which moves its
 * amount rounded as the charge was (12.344 → 12.340, 12.345 → 12.350), so a
 * full refund moves exactly what was charged. The answer says what Stripe moved.
 *
 * Time: the whole call is answered within STORE_REFUND_ANSWER_MS, inside the
 * plugin's 20 s wait, whatever UPSTREAM_TIMEOUT_MS is.
 */
import type { RefundFacts } from '@/lib/card/events';
import { MoneyError, StoreCallbackRefusedError } from '@/lib/errors';
import { log, type RequestContext } from '@/lib/log';
import { chargeableAmount, formatMinorUnits, toMinorUnits } from '@/lib/money';
import { isPaid } from '@/lib/orders/payable';
import type { Services } from '@/lib/services';
import { orderForCallback, orderIntent, paidIntentId, refusedInPlainWords } from '@/lib/store-callbacks/card-payment';
import type { StoreRefundRequest } from '@/lib/store-callbacks/schemas';
import { requestTimeLeftMs, withRequestDeadline } from '@/lib/upstream/budget';
import { refundLink } from '@/lib/webhooks/card/refund';

export interface StoreRefundAnswer {
  refund_id: string;
  /** Decimal string in the order's currency: what Stripe moved. */
  amount: string;
}

/** Refund statuses that mean the money is (or is on its way) back with the customer. */
const MONEY_RETURNED: ReadonlySet<string> = new Set(['succeeded', 'pending', 'requires_action']);

/**
 * A dropped refund's Stripe refund is adopted by a click within a day of it: the shop owner
 * trying again. Later, a refund of the same amount may be a new one, and the guard asks to look.
 */
export const ADOPTION_WINDOW_S = 24 * 60 * 60;

/** The plugin waits 20 s for an answer (store-callbacks.php); 5 s are left for the network and the route around this. */
export const STORE_REFUND_ANSWER_MS = 15_000;

/**
 * Stripe keeps an idempotency key for 24 hours; the metadata lookup covers the time after.
 * The amount is part of it, as a store may hand a refund id out again.
 */
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

function answerOf(refund: RefundFacts, currency: string): StoreRefundAnswer {
  if (!MONEY_RETURNED.has(refund.status)) {
    throw new StoreCallbackRefusedError(`Stripe could not complete this refund (${refund.status}).`, { refundId: refund.refundId });
  }
  return { refund_id: refund.refundId, amount: formatMinorUnits(refund.amount, currency) };
}

/** What Stripe moves for a WooCommerce refund of `amount` (see above); refused when it cannot move it. */
function amountToMove(amount: number, currency: string, leavesNothing: boolean): number {
  const rounded = chargeableAmount(amount, currency);
  if (rounded === amount || leavesNothing) return rounded;
  const lower = amount - (amount % 10);
  throw new StoreCallbackRefusedError(
    `Stripe refunds ${currency} in steps of ${formatMinorUnits(10, currency)}: refund ${formatMinorUnits(lower, currency)} or ` +
      `${formatMinorUnits(lower + 10, currency)} ${currency} (only the refund of all that remains may end in other digits).`,
  );
}

export function refundFromStore(input: StoreRefundRequest, services: Services, context: RequestContext): Promise<StoreRefundAnswer> {
  context.orderId = input.order_id;
  // A deadline of its own, lock wait included: the answer must reach the plugin before it gives up.
  return withRequestDeadline(Math.min(requestTimeLeftMs(), STORE_REFUND_ANSWER_MS), () =>
    services.orderLocks.withOrderLock(input.order_id, () => refundUnderLock(input, services, context)),
  );
}

async function refundUnderLock(input: StoreRefundRequest, services: Services, context: RequestContext): Promise<StoreRefundAnswer> {
  const orderId = input.order_id;
  const order = await orderForCallback(orderId, services);
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
      MONEY_RETURNED.has(r.status) &&
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

  const refundedAtStripe = stripeRefunds.filter((r) => MONEY_RETURNED.has(r.status)).reduce((sum, r) => sum + r.amount, 0);
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
