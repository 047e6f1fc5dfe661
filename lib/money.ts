/**
 * Money (docs/decisions.md#d7): WooCommerce's decimal strings become integer minor units
 * with integer arithmetic only, using Stripe's exponent for each currency.
 */
import { MoneyError } from '@/lib/errors';

// https://docs.stripe.com/currencies#zero-decimal and #three-decimal
const ZERO_DECIMAL = new Set([
  'bif', 'clp', 'djf', 'gnf', 'jpy', 'kmf', 'krw', 'mga', 'pyg', 'rwf', 'ugx', 'vnd', 'vuv', 'xaf', 'xof', 'xpf',
]);
const THREE_DECIMAL = new Set(['bhd', 'jod', 'kwd', 'omr', 'tnd']);

/** Digits after the decimal point in the currency's minor unit, as Stripe counts them. */
export function currencyExponent(currency: string): 0 | 2 | 3 {
  const code = currency.toLowerCase();
  if (ZERO_DECIMAL.has(code)) return 0;
  if (THREE_DECIMAL.has(code)) return 3;
  return 2;
}

const DECIMAL = /^([+-]?)(\d*)(?:\.(\d*))?$/;

/** Digits beyond the currency's exponent (a store with more price decimals) round half away from zero. */
export function toMinorUnits(amount: string | number, currency: string): number {
  // toFixed(6) is exact enough for any price a store holds and never uses exponent notation (NaN and Infinity fail the pattern).
  const text = typeof amount === 'number' ? amount.toFixed(6) : amount.trim();
  const [, sign, whole = '', fraction = ''] = DECIMAL.exec(text) ?? [];
  if (whole === '' && fraction === '') throw new MoneyError('Amount is not a decimal number');
  const exponent = currencyExponent(currency);
  const kept = fraction.slice(0, exponent).padEnd(exponent, '0');
  let minor = BigInt(`${whole || '0'}${kept}`);
  // The dropped digits, compared as text: from '5' on they round up.
  if (fraction.slice(exponent) >= '5') minor += 1n;
  if (sign === '-') minor = -minor;
  if (minor > BigInt(Number.MAX_SAFE_INTEGER) || minor < BigInt(Number.MIN_SAFE_INTEGER)) {
    throw new MoneyError('Amount is too large');
  }
  return Number(minor) || 0; // never -0
}

/** Stripe charges three-decimal currencies in multiples of 10: such totals round half up to 10. */
export function chargeableAmount(totalMinor: number, currency: string): number {
  if (currencyExponent(currency) !== 3) return totalMinor;
  const remainder = totalMinor % 10;
  return remainder >= 5 ? totalMinor - remainder + 10 : totalMinor - remainder;
}

export function formatMinorUnits(minor: number, currency: string): string {
  const exponent = currencyExponent(currency);
  if (exponent === 0) return String(minor);
  const digits = String(Math.abs(minor)).padStart(exponent + 1, '0');
  return `${minor < 0 ? '-' : ''}${digits.slice(0, -exponent)}.${digits.slice(-exponent)}`;
}
