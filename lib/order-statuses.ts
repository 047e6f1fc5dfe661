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

export type OrderStatus = (typeof ORDER_STATUS)[keyof typeof ORDER_STATUS];
