/**
 * Request bodies of the two checkout endpoints (docs/contract.md#spec-2-2, docs/decisions.md#d6): unknown keys
 * dropped, and only values WooCommerce accepts, so a typo is a 400 here, never a 500 after the store refused it.
 */
import { z } from 'zod';
import { CHECKOUT_EMAIL_PATTERN, EMAIL_MAX_LENGTH, isCheckoutEmail } from './email';

const EMAIL_MESSAGE = 'must be a valid email address';

/** A string PHP's json_decode can read: no unpaired UTF-16 surrogate. */
export const text = (max: number) => z.string().trim().max(max).refine((value) => !/\p{Cs}/u.test(value), 'must be valid Unicode text');

/** Not zod's email rule: it refuses addresses the store and its customers use. */
const email = z
  .string()
  .refine(isCheckoutEmail, EMAIL_MESSAGE)
  .meta({
    maxLength: EMAIL_MAX_LENGTH,
    pattern: CHECKOUT_EMAIL_PATTERN,
    description: "An address WordPress's is_email() accepts (the store's own rule), of at most 320 characters.",
  });

export const addressSchema = z.object({
  first_name: text(100).optional(),
  last_name: text(100).optional(),
  company: text(200).optional(),
  address_1: text(200).optional(),
  address_2: text(200).optional(),
  city: text(100).optional(),
  state: text(100).optional(),
  postcode: text(20).optional(),
  country: text(2).optional(),
  email: z.union([z.literal(''), email]).optional(),
  phone: text(40).optional(),
});

export const contactInfoSchema = z.object({
  email: email.optional(),
  phone: text(40).optional(),
});

export const token = z
  .string({ error: 'checkout token is required' })
  .min(1, 'checkout token is required')
  .max(4096, 'checkout token is too long');

/** WooCommerce refuses an empty billing email: accepted only when contact_info carries one. */
function billingEmailGiven(body: { billing_address?: CheckoutAddress | undefined; contact_info?: ContactInfo | undefined }, ctx: z.RefinementCtx): void {
  if (body.billing_address?.email === '' && body.contact_info?.email === undefined) {
    ctx.addIssue({ code: 'custom', path: ['billing_address', 'email'], message: `${EMAIL_MESSAGE}, or be left out` });
  }
}

export const paymentIntentRequestSchema = z
  .object({
    token,
    billing_address: addressSchema.optional(),
    shipping_address: addressSchema.nullable().optional(),
    contact_info: contactInfoSchema.optional(),
    save_payment_method: z
      .boolean({ error: 'must be true or false' })
      .optional()
      .meta({ description: "The customer ticked \"save this card\": a registered customer's card is saved to their Stripe Customer once paid." }),
  })
  .superRefine(billingEmailGiven);

export const submitOrderRequestSchema = z
  .object({
    token,
    billing_address: addressSchema,
    shipping_address: addressSchema.nullable().optional(),
    contact_info: contactInfoSchema.optional(),
  })
  .superRefine(billingEmailGiven);

export type CheckoutAddress = z.infer<typeof addressSchema>;
export type ContactInfo = z.infer<typeof contactInfoSchema>;
export type PaymentIntentRequest = z.infer<typeof paymentIntentRequestSchema>;
export type SubmitOrderRequest = z.infer<typeof submitOrderRequestSchema>;
