/** Request bodies of the express-checkout endpoints: the partial address a wallet reports before the customer authorizes. */
import { z } from 'zod';
import { text, token } from './schemas';

/** Stripe's Express Checkout Element `shippingaddresschange` address (postal codes may be cut short by the wallet). */
export const walletAddressSchema = z.object({
  country: z
    .string()
    .trim()
    .regex(/^[A-Za-z]{2}$/, 'must be a two-letter country code')
    .transform((v) => v.toUpperCase()),
  state: text(100).optional(),
  postal_code: text(20).optional(),
  city: text(100).optional(),
});

export const shippingRatesRequestSchema = z.object({ token, address: walletAddressSchema });

export const shippingRateRequestSchema = z.object({
  token,
  shipping_rate_id: z.string().trim().min(1, 'shipping_rate_id is required').max(200),
  address: walletAddressSchema,
});

export type WalletAddress = z.infer<typeof walletAddressSchema>;
export type ShippingRatesRequest = z.infer<typeof shippingRatesRequestSchema>;
export type ShippingRateRequest = z.infer<typeof shippingRateRequestSchema>;
