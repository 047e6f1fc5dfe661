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

const cents = z.int().describe('Integer, in the currency’s minor unit.');

/** A wallet sheet's line (Express Checkout Element `lineItems`): the lines add up to the total. */
export const sheetLineItemSchema = z.object({ name: z.string(), amount: cents });

export const expressShippingRateSchema = z.object({
  id: z.string().describe('WooCommerce’s rate id (`flat_rate:3`): send it back to choose the rate.'),
  label: z.string(),
  amount: cents.describe('The rate with its tax, as the wallet lists it.'),
  total: cents.describe('The order’s total with this rate at this address, tax included as the store charges it.'),
  line_items: z.array(sheetLineItemSchema),
});

export const shippingRatesResponseSchema = z.object({
  success: z.literal(true),
  currency: z.string().describe('Lower-case ISO code, as Stripe.js takes it.'),
  shipping_rates: z.array(expressShippingRateSchema).describe('Empty when no shipping method serves the address: reject it in the wallet.'),
});

export const shippingRateResponseSchema = z.object({
  success: z.literal(true),
  currency: z.string(),
  total: cents.describe('The order’s total as the store recalculated it: the payment intent’s amount, and the sheet’s.'),
  shipping_rate: expressShippingRateSchema.pick({ id: true, label: true, amount: true }),
  line_items: z.array(sheetLineItemSchema),
});

export type SheetLineItem = z.output<typeof sheetLineItemSchema>;
export type ExpressShippingRate = z.output<typeof expressShippingRateSchema>;
export type ShippingRatesResponse = z.output<typeof shippingRatesResponseSchema>;
export type ShippingRateResponse = z.output<typeof shippingRateResponseSchema>;
