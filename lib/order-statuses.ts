/**
 * The WooCommerce order statuses the service reads or writes, in one place (the REST API spells
 * them without WooCommerce's `wc-` prefix).
 */
export const ORDER_STATUS = {
  pending: 'pending',
  processing: 'processing',
  onHold: 'on-hold',
  completed: 'completed',
  failed: 'failed',
  cancelled: 'cancelled',
  refunded: 'refunded',
  /** Not in stock WooCommerce: a plugin adds it; without it a shipment writes `completed` (lib/shared-state/shipped-status/shipped-status.ts). */
  shipped: 'shipped',
  /** Not in stock WooCommerce: a status some shops add for paid orders waiting to ship. */
  awaitingShipment: 'awaiting_shipment',
  /** Registered by the companion plugin: a card authorization waits for its capture at shipping (STRIPE_CAPTURE=on_shipment). */
  authorized: 'authorized',
} as const;

export type OrderStatus = (typeof ORDER_STATUS)[keyof typeof ORDER_STATUS];
