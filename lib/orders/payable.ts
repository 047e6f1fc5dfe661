/** Paid and payable (docs/decisions.md#d8). */
import type { NotPayableReason } from '@/lib/errors';
import { ORDER_STATUS, PAID_STATUSES } from '@/lib/order-statuses';
import type { StoreOrder } from '@/lib/store/types';

export function isPaid(order: Pick<StoreOrder, 'status' | 'date_paid'>): boolean {
  return Boolean(order.date_paid) || PAID_STATUSES.has(order.status);
}

/** Why an order cannot be paid, or undefined when it can: it is pending and not paid. */
export function notPayableReason(order: Pick<StoreOrder, 'status' | 'date_paid'>): NotPayableReason | undefined {
  if (isPaid(order)) return 'Order is already paid';
  if (order.status !== ORDER_STATUS.pending) return 'Order status is not pending';
  return undefined;
}
