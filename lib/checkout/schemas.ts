/**
 * Request bodies of the two checkout endpoints (spec 2.2, 4.1, 4.2; DECISIONS 6).
 * Unknown keys are dropped at every level, so a client cannot reach any order
 * field but the whitelisted address and contact fields.
 */
import { z } from 'zod';

const text = (max: number) => z.string().trim().max(max);
const email = z.email('must be a valid email address').max(254);

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

const token = z
  .string({ error: 'checkout token is required' })
  .min(1, 'checkout token is required')
  .max(4096, 'checkout token is too long');

export const paymentIntentRequestSchema = z.object({
  token,
  billing_address: addressSchema.optional(),
  shipping_address: addressSchema.nullable().optional(),
  contact_info: contactInfoSchema.optional(),
});

export const submitOrderRequestSchema = z.object({
  token,
  billing_address: addressSchema,
  shipping_address: addressSchema.nullable().optional(),
  contact_info: contactInfoSchema.optional(),
});

export type CheckoutAddress = z.infer<typeof addressSchema>;
export type ContactInfo = z.infer<typeof contactInfoSchema>;
export type PaymentIntentRequest = z.infer<typeof paymentIntentRequestSchema>;
export type SubmitOrderRequest = z.infer<typeof submitOrderRequestSchema>;
