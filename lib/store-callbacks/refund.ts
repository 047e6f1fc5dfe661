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
 * One guard against refunding twice: when Stripe has refunded more of the
 * payment than WooCommerce shows (a refund made in the Stripe Dashboard whose
 * event is not recorded yet, or an earlier admin refund that went through at
 * Stripe after WooCommerce gave up on it and dropped its refund), a new refund
 * is refused with what to check, instead of paying the customer back twice.
 */
import type { RefundFacts } from '@/lib/card/events';
import { MoneyError, StoreCallbackRefusedError } from '@/lib/errors';
import { log, type RequestContext } from '@/lib/log';
import { formatMinorUnits, toMinorUnits } from '@/lib/money';
import { isPaid } from '@/lib/orders/payable';
import type { Services } from '@/lib/services';
import { orderForCallback, orderIntent, paidIntentId, refusedInPlainWords } from '@/lib/store-callbacks/card-payment';
import type { StoreRefundRequest } from '@/lib/store-callbacks/schemas';

export interface StoreRefundAnswer {
  refund_id: string;
  /** Decimal string in the order's currency. */
  amount: string;
}

/** Refund statuses that mean the money is (or is on its way) back with the customer. */
const MONEY_RETURNED: ReadonlySet<string> = new Set(['succeeded', 'pending', 'requires_action']);

/** Stripe keeps an idempotency key for 24 hours; the metadata lookup covers the time after. */
export function refundIdempotencyKey(orderId: number, storeRefundId: number): string {
  return `store-refund-${orderId}-${storeRefundId}`;
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

export async function refundFromStore(input: StoreRefundRequest, services: Services, context: RequestContext): Promise<StoreRefundAnswer> {
  const orderId = input.order_id;
  context.orderId = orderId;
  return services.orderLocks.withOrderLock(orderId, async () => {
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

    const intent = await orderIntent(order, intentId, services);
    const card = await services.card();
    const stripeRefunds = intent.chargeId === '' ? [] : await card.listChargeRefunds(intent.chargeId);
    const made = stripeRefunds.find((refund) => refund.storeRefundId === input.refund_id);
    if (made) {
      context.outcome = 'refund_already_made';
      return answerOf(made, currency);
    }

    const refundedAtStripe = stripeRefunds.filter((r) => MONEY_RETURNED.has(r.status)).reduce((sum, r) => sum + r.amount, 0);
    const refundedInStore = storeRefunds.filter((r) => r.id !== input.refund_id).reduce((sum, r) => sum + amountIn(currency, r.amount), 0);
    if (refundedAtStripe > refundedInStore) {
      log.warn('store_callback.refund_unrecorded_at_stripe', { orderId, refundedAtStripe, refundedInStore, currency });
      throw new StoreCallbackRefusedError(
        `Stripe has already refunded ${formatMinorUnits(refundedAtStripe, currency)} ${currency} of this payment, more than the ` +
          `${formatMinorUnits(refundedInStore, currency)} ${currency} the order shows. Check the payment's refunds in the Stripe Dashboard ` +
          'and wait for them to be recorded (or record them with "Refund manually") before refunding again.',
      );
    }

    const refund = await refusedInPlainWords('refund', () =>
      card.createRefund({
        intentId,
        amount,
        metadata: {
          shop_order_id: String(orderId),
          shop_refund_id: String(input.refund_id),
          ...(input.reason ? { shop_refund_reason: input.reason.slice(0, 500) } : {}),
        },
        idempotencyKey: refundIdempotencyKey(orderId, input.refund_id),
      }),
    );
    context.outcome = 'refund_made';
    log.info('store_callback.refund_made', { orderId, storeRefundId: input.refund_id, refundId: refund.refundId, amount, currency });
    return answerOf(refund, currency);
  });
}
