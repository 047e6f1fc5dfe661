import { InvalidSignatureError } from '@/lib/errors';

/** Stripe's own header name first (docs/decisions.md#d1), then the spec's neutral one. */
export const SIGNATURE_HEADERS = ['stripe-signature', 'cardprovider-signature'] as const;

export function signatureFrom(headers: Headers): string {
  for (const name of SIGNATURE_HEADERS) {
    const value = headers.get(name);
    if (value) return value;
  }
  throw new InvalidSignatureError('Missing signature');
}
