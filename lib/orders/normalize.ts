/** The normalized order in minor units, from its parts (docs/decisions.md#d7): WooCommerce's `total` is never charged. */
import { log } from '@/lib/log';
import { chargeableAmount, toMinorUnits } from '@/lib/money';
import type { StoreOrder } from '@/lib/store/types';
import { META } from '@/lib/orders/meta-keys';

export type NormalizedOrder = ReturnType<typeof normalizeOrder>;

export function metaValue(order: StoreOrder, key: string): string | undefined {
  const entry = order.meta_data.find((m) => m.key === key);
  return typeof entry?.value === 'string' && entry.value !== '' ? entry.value : undefined;
}

export function normalizeOrder(order: StoreOrder) {
  const currency = order.currency.toUpperCase();
  const minor = (amount: string) => toMinorUnits(amount, currency);
  const sum = (lines: { total: string }[]) => lines.reduce((acc, line) => acc + minor(line.total), 0);

  const subtotal = sum(order.line_items);
  const fees = sum(order.fee_lines);
  const shipping = minor(order.shipping_total);
  const tax = minor(order.total_tax);
  const total = subtotal + fees + shipping + tax;

  const storeTotal = minor(order.total);
  if (storeTotal !== total) {
    log.warn('order.total_mismatch', { orderId: order.id, currency, computedTotal: total, storeTotal });
  }

  const email = typeof order.billing.email === 'string' && order.billing.email !== '' ? order.billing.email : undefined;
  return {
    id: order.id,
    status: order.status,
    subtotal_cents: subtotal,
    /** Σ fee_lines[].total (may be negative). */
    fees_cents: fees,
    tax_cents: tax,
    shipping_cost_cents: shipping,
    total_cents: total,
    /** What the card provider is asked to charge (total_cents, rounded to 10 for three-decimal currencies). */
    charge_cents: chargeableAmount(total, currency),
    currency,
    email,
    customer_id: order.customer_id,
    payment_intent_id: metaValue(order, META.paymentIntentId),
  };
}
