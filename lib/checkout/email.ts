/**
 * The checkout's email rule: WordPress's is_email() (wp-includes/formatting.php, WordPress 6.8.3),
 * which WooCommerce applies to an order's billing email, plus two limits of the store it does not
 * state (docs/decisions.md#d6). A pure function, checked against the PHP itself; and what of it Stripe is sent.
 */
import { z } from 'zod';

/** HPOS's `billing_email` column is varchar(320): a longer address fails the store's save with a 500. */
export const EMAIL_MAX_LENGTH = 320;

const LOCAL = /^[a-zA-Z0-9!#$%&'*+/=?^_`{|}~.-]+$/;
const SUB = /^[a-z0-9-]+$/i;

/** preg_match without the D modifier: its `$` also matches before a final newline. */
const pregMatch = (pattern: RegExp, value: string) => pattern.test(value) || (value.endsWith('\n') && pattern.test(value.slice(0, -1)));

/** PHP's trim() with a character list. */
function phpTrim(value: string, characters: string): string {
  let start = 0;
  let end = value.length;
  while (start < end && characters.includes(value[start]!)) start += 1;
  while (end > start && characters.includes(value[end - 1]!)) end -= 1;
  return value.slice(start, end);
}

const WHITESPACE = ' \t\n\r\0\x0B';

/** is_email(), rule for rule, with no plugin filter: true where it returns the address. */
export function isWordPressEmail(email: string): boolean {
  // strlen() counts bytes.
  if (new TextEncoder().encode(email).length < 6) return false;
  if (email.indexOf('@', 1) === -1) return false;
  const at = email.indexOf('@');
  const local = email.slice(0, at);
  const domain = email.slice(at + 1);
  if (!pregMatch(LOCAL, local)) return false;
  if (/\.{2,}/.test(domain)) return false;
  if (phpTrim(domain, `${WHITESPACE}.`) !== domain) return false;
  const subs = domain.split('.');
  if (subs.length < 2) return false;
  return subs.every((sub) => phpTrim(sub, `${WHITESPACE}-`) === sub && pregMatch(SUB, sub));
}

/**
 * What the checkout accepts: what is_email() accepts, at most EMAIL_MAX_LENGTH characters, and no
 * newline (is_email() lets one end the local part, then sanitize_email() drops it: the store would
 * keep another address than the customer's).
 */
export function isCheckoutEmail(email: string): boolean {
  return email.length <= EMAIL_MAX_LENGTH && !email.includes('\n') && isWordPressEmail(email);
}

/**
 * The same rule as one ECMAScript pattern (a JSON Schema `pattern`, whose `$` ends the string),
 * for the OpenAPI document; tests check it agrees with isCheckoutEmail on every case.
 */
export const CHECKOUT_EMAIL_PATTERN =
  "^(?=[\\s\\S]{6,320}$)[A-Za-z0-9!#$%&'*+/=?^_`{|}~.-]+@[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)+$";

const conservativeEmail = z.email();

/**
 * The address sent to Stripe as `receipt_email`: the order's, when it is also a plain address by the usual
 * standard. Stripe refuses some that WordPress accepts (`email_invalid`) and would fail the checkout for a
 * receipt; such a customer gets WooCommerce's emails only.
 */
export function stripeReceiptEmail(email: string | undefined): string | undefined {
  return email !== undefined && conservativeEmail.safeParse(email).success ? email : undefined;
}
