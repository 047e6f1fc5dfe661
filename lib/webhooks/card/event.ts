import { InvalidSignatureError } from '@/lib/errors';

/** Stripe's own header name first (docs/decisions.md#d1), then the spec's neutral one. */
export const SIGNATURE_HEADERS = ['stripe-signature', 'cardprovider-signature'] as const;

export function signatureFrom(headers: Headers): string {
  const value = SIGNATURE_HEADERS.map((name) => headers.get(name)).find(Boolean);
  if (!value) throw new InvalidSignatureError('Missing signature');
  return value;
}
