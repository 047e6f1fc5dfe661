/**
 * The card webhook's request (docs/contract.md#spec-4-3): the signature header. The event
 * itself is read at the card boundary (lib/card/events.ts).
 */
import { InvalidSignatureError } from '@/lib/errors';

/** Stripe's own header name first (docs/decisions.md#d1), then the spec's neutral one. */
export const SIGNATURE_HEADERS = ['stripe-signature', 'cardprovider-signature'] as const;

/** The signature header's value; InvalidSignatureError('Missing signature') when neither header is present. */
export function signatureFrom(headers: Headers): string {
  for (const name of SIGNATURE_HEADERS) {
    const value = headers.get(name);
    if (value) return value;
  }
  throw new InvalidSignatureError('Missing signature');
}
