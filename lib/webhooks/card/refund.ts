/**
 * `charge.refunded` (CARD_LIFECYCLE_EVENTS=refunds): money went back to the
 * customer at Stripe (dashboard or API). The store records it as WooCommerce
 * refunds, one per Stripe refund id, recording only (`api_refund: false`, so
 * WooCommerce calls no gateway back). WooCommerce marks a fully refunded order
 * `refunded` by itself; the service does not fight it.
 *
 * Which refunds: the charge's refunds as the provider lists them now (one
 * call, paged), not the event's snapshot (API 2022-11-15 and later leave it
 * out). A refund already recorded, whose id is on a WooCommerce refund's
 * `_provider_refund_id`, is never recorded twice: a redelivered event, the
 * second event of a partial then full refund, or reconciliation finding the
 * same event again all end with one WooCommerce refund per Stripe refund.
 * A refund made from the WooCommerce admin through the companion plugin is
 * already a WooCommerce refund, named by the Stripe refund's metadata.
 * Refunds that failed or were canceled are not recorded.
 *
 * An order not paid yet (the refund arrived before the payment's event):
 * answered 400, so Stripe delivers it again after the payment is recorded.
 */
import { CardEventTooEarlyError } from '@/lib/errors';
import { formatMinorUnits, toMinorUnits } from '@/lib/money';
import { log } from '@/lib/log';
import type { ChargeFacts } from '@/lib/card/events';
import { META } from '@/lib/orders/meta-keys';
import { isPaid } from '@/lib/orders/payable';
import type { Services } from '@/lib/services';
import type { StoreRefund } from '@/lib/store/types';
import { concernsOtherPayment, OTHER_PAYMENT } from '@/lib/webhooks/card/duplicate-payment';
import { cardEventHandler, changed, unchanged, type Changed, type Unchanged } from '@/lib/webhooks/card/handler';

/** Refund statuses that mean the money is (or is on its way) back with the customer. */
const RECORDED_STATUSES: ReadonlySet<string> = new Set(['succeeded', 'pending', 'requires_action']);

export type ChargeRefundedOutcome = Changed<'refund_recorded'> | Unchanged<'refund_already_recorded' | typeof OTHER_PAYMENT>;

/** The Stripe refund id a WooCommerce refund records, if the service made it. */
export function providerRefundIdOf(refund: StoreRefund): string | undefined {
  const entry = refund.meta_data.find((m) => m.key === META.providerRefundId && typeof m.value === 'string');
  return entry?.value as string | undefined;
}

export async function recordChargeRefunds(orderId: number, charge: ChargeFacts, services: Services): Promise<ChargeRefundedOutcome> {
  const store = services.store();
  const order = await store.getOrder(orderId);
  if (!isPaid(order)) throw new CardEventTooEarlyError('Webhook Error: the order is not paid yet; the refund is recorded once the payment is');
  if (concernsOtherPayment(orderId, order, charge, 'refund')) return unchanged(OTHER_PAYMENT);

  const refunds = await (await services.card()).listChargeRefunds(charge.chargeId);
  const existing = await store.listRefunds(orderId);
  const recorded = new Set(existing.map(providerRefundIdOf).filter((id): id is string => id !== undefined));
  // A refund made from the WooCommerce admin names its WooCommerce refund (lib/store-callbacks/refund.ts):
  // recorded already while that refund exists; recorded here if WooCommerce dropped it after a lost answer.
  const storeRefundIds = new Set(existing.map((refund) => refund.id));
  const currency = order.currency.toUpperCase();
  let remaining = toMinorUnits(order.total, currency) - existing.reduce((sum, refund) => sum + toMinorUnits(refund.amount, currency), 0);

  let created = 0;
  for (const refund of refunds) {
    if (!RECORDED_STATUSES.has(refund.status) || recorded.has(refund.refundId)) continue;
    if (refund.storeRefundId !== undefined && storeRefundIds.has(refund.storeRefundId)) continue;
    if (refund.currency !== currency.toLowerCase() || refund.amount > remaining) {
      // WooCommerce would refuse it ("Invalid refund amount."): the shop must look, not Stripe retry.
      log.error('card.refund_not_recordable', {
        orderId,
        refundId: refund.refundId,
        amount: refund.amount,
        currency: refund.currency,
        remaining,
        orderCurrency: currency,
        action: 'record the refund in WooCommerce by hand',
      });
      continue;
    }
    await store.createRefund(orderId, {
      amount: formatMinorUnits(refund.amount, currency),
      reason: `Refunded at Stripe (${refund.refundId})`,
      meta: { [META.providerRefundId]: refund.refundId },
    });
    remaining -= refund.amount;
    created += 1;
  }
  return created > 0 ? changed('refund_recorded') : unchanged('refund_already_recorded');
}

export const chargeRefunded = cardEventHandler({
  kind: 'charge',
  setting: 'refunds',
  apply: (orderId, event, services) => recordChargeRefunds(orderId, event.charge, services),
});
