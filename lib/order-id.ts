/**
 * The one reading of an order id that arrives as text; fifteen digits keep it exact in a number.
 * A token's subject is canonical (`007` was not minted here); Stripe metadata and ShipStation
 * order numbers may be padded (`0042` is order 42, padding counted in the fifteen).
 */
export const MAX_ORDER_ID_DIGITS = 15;

const CANONICAL = /^[1-9]\d*$/;

/** The order id `value` names, or undefined: never 0, never a partial read (`12abc`, ` 1`, `1e3`). */
export function parseOrderId(value: unknown, form: 'canonical' | 'zero_padded' = 'canonical'): number | undefined {
  if (typeof value !== 'string' || value.length > MAX_ORDER_ID_DIGITS) return undefined;
  const digits = form === 'zero_padded' && /^0+\d/.test(value) ? value.replace(/^0+/, '') : value;
  return CANONICAL.test(digits) ? Number(digits) : undefined;
}
