/** The checkout's email rule: WordPress 6.8.3's is_email() plus two limits of the store (docs/decisions.md#d6). */
import { z } from 'zod';

/** HPOS's `billing_email` column is varchar(320): a longer address fails the store's save with a 500. */
export const EMAIL_MAX_LENGTH = 320;

const LOCAL = /^[a-zA-Z0-9!#$%&'*+/=?^_`{|}~.-]+$/;
const SUB = /^[a-z0-9-]+$/i;

/** preg_match without the D modifier: its `$` also matches before a final newline. */
const pregMatch = (pattern: RegExp, value: string) => pattern.test(value) || (value.endsWith('\n') && pattern.test(value.slice(0, -1)));

/** What PHP's trim() would change: a first or last character of its whitespace list, or a dot (domain) or dash (label). */
const DOMAIN_EDGE = /^[ \t\n\r\0\x0B.]|[ \t\n\r\0\x0B.]$/;
const LABEL_EDGE = /^[ \t\n\r\0\x0B-]|[ \t\n\r\0\x0B-]$/;

export function isWordPressEmail(email: string): boolean {
  // strlen() counts bytes.
  if (new TextEncoder().encode(email).length < 6) return false;
  if (email.indexOf('@', 1) === -1) return false;
  const at = email.indexOf('@');
  const domain = email.slice(at + 1);
  if (!pregMatch(LOCAL, email.slice(0, at))) return false;
  if (/\.{2,}/.test(domain) || DOMAIN_EDGE.test(domain)) return false;
  const subs = domain.split('.');
  return subs.length >= 2 && subs.every((sub) => !LABEL_EDGE.test(sub) && pregMatch(SUB, sub));
}

/** No newline: is_email() lets one end the local part, then sanitize_email() drops it, keeping another address. */
export function isCheckoutEmail(email: string): boolean {
  return email.length <= EMAIL_MAX_LENGTH && !email.includes('\n') && isWordPressEmail(email);
}

/** The same rule as a JSON Schema `pattern`, for the OpenAPI document. */
export const CHECKOUT_EMAIL_PATTERN =
  "^(?=[\\s\\S]{6,320}$)[A-Za-z0-9!#$%&'*+/=?^_`{|}~.-]+@[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)+$";

const conservativeEmail = z.email();

/** Stripe refuses some addresses WordPress accepts (`email_invalid`): those get WooCommerce's emails only. */
export function stripeReceiptEmail(email: string | undefined): string | undefined {
  return email !== undefined && conservativeEmail.safeParse(email).success ? email : undefined;
}
