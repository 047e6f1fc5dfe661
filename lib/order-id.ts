/**
 * The one reading of an order id that arrives as text: the checkout token's subject, the
 * `shop_order_id` metadata on a card payment, a shipment's order number. A WooCommerce order id is
 * a positive integer; fifteen digits at most keeps every id exact in a JavaScript number (2^53 has
 * sixteen) and far beyond any shop's count.
 *
 * The service writes ids one way, without leading zeros, so a token whose subject is `007` was not
 * minted here and is refused. Metadata and order numbers come from elsewhere too (a ShipStation
 * store may pad its order numbers, metadata can be edited in Stripe's dashboard): there `0042` names
 * order 42, and the fifteen characters count the padding, as before.
 */
export const MAX_ORDER_ID_DIGITS = 15;

const CANONICAL = /^[1-9]\d*$/;

export type OrderIdForm = 'canonical' | 'zero_padded';

/** The order id `value` names, or undefined: never 0, never a partial read (`12abc`, ` 1`, `1e3`). */
export function parseOrderId(value: unknown, form: OrderIdForm = 'canonical'): number | undefined {
  if (typeof value !== 'string' || value.length > MAX_ORDER_ID_DIGITS) return undefined;
  const digits = form === 'zero_padded' && /^0+\d/.test(value) ? value.replace(/^0+/, '') : value;
  return CANONICAL.test(digits) ? Number(digits) : undefined;
}
