// How a Stripe refund stands against the order's WooCommerce refunds (docs/contract.md#admin-refunds-exactly-once).
import type { RefundFacts } from '@/lib/card/events';
import { chargeableAmount, toMinorUnits } from '@/lib/money';
import { META } from '@/lib/orders/meta-keys';
import type { StoreRefund } from '@/lib/store/types';

/** A refund whose money is back with the customer, or on its way: one Stripe refund status list for the webhook and the store's calls. */
export const MONEY_RETURNED_STATUSES: ReadonlySet<string> = new Set(['succeeded', 'pending', 'requires_action']);

/** The plugin waits 2 × 20 s and WooCommerce drops its refund right after: ten minutes is ample. */
export const UNSETTLED_STORE_REFUND_MS = 10 * 60_000;

function providerRefundIdOf(refund: StoreRefund): string | undefined {
  const entry = refund.meta_data.find((m) => m.key === META.providerRefundId && typeof m.value === 'string');
  return entry?.value as string | undefined;
}

/** A refund WooCommerce may still drop. */
export function isUnsettled(refund: StoreRefund, now = Date.now()): boolean {
  if (providerRefundIdOf(refund) !== undefined || refund.refunded_payment === true || !refund.date_created_gmt) return false;
  const created = Date.parse(`${refund.date_created_gmt.replace(/Z$/, '')}Z`);
  return Number.isFinite(created) && now - created < UNSETTLED_STORE_REFUND_MS;
}

/** Three-decimal currencies move in steps of 10 (docs/contract.md#three-decimal-refunds). */
function movesStoreAmount(stripeAmount: number, storeAmount: number, currency: string): boolean {
  return stripeAmount === storeAmount || stripeAmount === chargeableAmount(storeAmount, currency);
}

/** `orphaned`: it names a WooCommerce refund no longer there (dropped after a lost answer, or its id handed out again). */
export function refundLink(refund: RefundFacts, storeRefunds: readonly StoreRefund[], currency: string, now = Date.now()) {
  const holder = storeRefunds.find((r) => providerRefundIdOf(r) === refund.refundId);
  if (holder) return { kind: 'recorded', by: holder } as const;
  if (refund.storeRefundId === undefined) return { kind: 'unrecorded' } as const;
  const named = storeRefunds.find(
    (r) =>
      r.id === refund.storeRefundId &&
      providerRefundIdOf(r) === undefined &&
      movesStoreAmount(refund.amount, toMinorUnits(r.amount, currency), currency),
  );
  if (!named) return { kind: 'orphaned' } as const;
  return isUnsettled(named, now) ? ({ kind: 'in_flight', by: named } as const) : ({ kind: 'recorded', by: named } as const);
}
