/** The order statuses the service reads or writes, as the REST API spells them (no `wc-` prefix). */
export const ORDER_STATUS = {
  pending: 'pending',
  processing: 'processing',
  onHold: 'on-hold',
  completed: 'completed',
  failed: 'failed',
  cancelled: 'cancelled',
  refunded: 'refunded',
  /** This and the two below are not stock WooCommerce: plugins add them (docs/decisions.md#d27). */
  shipped: 'shipped',
  awaitingShipment: 'awaiting_shipment',
  authorized: 'authorized',
} as const;

/** Paid, and on its way to the customer (docs/decisions.md#d8). */
export const PAID_STATUSES: ReadonlySet<string> = new Set([
  ORDER_STATUS.processing,
  ORDER_STATUS.completed,
  ORDER_STATUS.shipped,
  ORDER_STATUS.awaitingShipment,
]);
/** Held by the payment model; `authorized` when nothing but the card authorization holds it. */
export const HOLD_STATUSES: ReadonlySet<string> = new Set([ORDER_STATUS.onHold, ORDER_STATUS.authorized]);
/** Can no longer be paid: it holds no money, and none is captured for it. */
export const CLOSED_STATUSES: ReadonlySet<string> = new Set([ORDER_STATUS.cancelled, ORDER_STATUS.failed, ORDER_STATUS.refunded]);
