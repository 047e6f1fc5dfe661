/**
 * Every response body as a zod schema: the OpenAPI document, the storefront client's types and the
 * route tests' checks all come from here, so they cannot drift apart (docs/contract.md#routes).
 */
import { z } from 'zod';
import { NOT_PAYABLE_REASONS, SHOP_BUSY_MESSAGE } from '@/lib/errors';

export const paymentIntentResponseSchema = z.object({
  success: z.literal(true),
  client_secret: z.string().min(1).describe('Hand it to Stripe.js (Payment Element) to confirm the payment.'),
  payment_intent_id: z.string().min(1),
  customer_session_client_secret: z
    .string()
    .min(1)
    .optional()
    .describe("A registered customer's Stripe Customer Session: pass it to Elements as customerSessionClientSecret to list their saved cards. Absent for a guest."),
});

export const submitOrderResponseSchema = z.object({
  success: z.literal(true),
  order_id: z.int().positive(),
  total: z.int().nonnegative().describe('The order total in minor units (cents), computed on the server.'),
  currency: z.string().min(1),
});

export const receivedResponseSchema = z.object({ received: z.literal(true) });

export const validationIssueSchema = z.looseObject({
  code: z.string(),
  path: z.array(z.union([z.string(), z.number()])),
  message: z.string(),
});

export const invalidRequestResponseSchema = z.object({
  error: z.literal('Invalid request'),
  details: z.array(validationIssueSchema),
});

export const notPayableResponseSchema = z.object({
  error: z.enum(['Order cannot be paid', 'Order cannot be submitted for payment']),
  details: z.object({
    orderId: z.int().positive(),
    status: z.string(),
    reason: z.enum(NOT_PAYABLE_REASONS),
  }),
});

export const checkoutRateLimitedResponseSchema = z.object({
  error: z.literal('Too many requests. Please try again later.'),
});

export const CHECKOUT_ERROR_CODES = ['PAYMENT_INTENT_ERROR', 'SUBMIT_ORDER_ERROR', 'EXPRESS_CHECKOUT_ERROR'] as const;

export const checkoutFailureResponseSchema = z.object({
  success: z.literal(false),
  error: z.object({
    code: z.enum(CHECKOUT_ERROR_CODES),
    message: z.string(),
    details: z.unknown().optional().describe('Present only in a development environment.'),
  }),
});

export const checkoutBusyResponseSchema = z.object({
  success: z.literal(false),
  error: z.object({
    code: z.literal('SHOP_BUSY'),
    message: z.literal(SHOP_BUSY_MESSAGE).describe('Written to be shown to the customer as it is.'),
    retry_after_seconds: z.int().positive().describe('The same as the Retry-After header, for clients that cannot read it.'),
  }),
});

export const payloadTooLargeResponseSchema = z.object({ error: z.literal('Payload too large') });

export const webhookRateLimitedResponseSchema = z.object({ error: z.literal('Too many requests') });

export const cardWebhookErrorResponseSchema = z.object({ error: z.string().min(1) });

export const unauthorizedResponseSchema = z.object({ error: z.literal('Unauthorized') });

export const storeRefundResponseSchema = z.object({
  refund_id: z.string().min(1).describe('The Stripe refund (`re_…`).'),
  amount: z.string().min(1).describe('The amount refunded, a decimal string in the order’s currency.'),
});

export const storeCaptureResponseSchema = z.object({
  captured: z.string().min(1).describe('The amount captured, a decimal string in the order’s currency.'),
});

export const storeCancelAuthorizationResponseSchema = z.object({
  canceled: z.boolean().describe('Whether the authorization is released (now or before); false when the order holds none.'),
});

export const storeCallbackErrorResponseSchema = z.object({ error: z.string().min(1) });

export type PaymentIntentResponse = z.output<typeof paymentIntentResponseSchema>;
export type SubmitOrderResponse = z.output<typeof submitOrderResponseSchema>;
export type ValidationIssue = z.output<typeof validationIssueSchema>;
export type InvalidRequestResponse = z.output<typeof invalidRequestResponseSchema>;
export type NotPayableResponse = z.output<typeof notPayableResponseSchema>;
export type CheckoutFailureResponse = z.output<typeof checkoutFailureResponseSchema>;
export type CheckoutBusyResponse = z.output<typeof checkoutBusyResponseSchema>;

/** Every error body lib/http/errors.ts may answer with, so the compiler holds it to these schemas. */
export type ErrorResponseBody =
  | z.output<typeof checkoutRateLimitedResponseSchema>
  | z.output<typeof payloadTooLargeResponseSchema>
  | InvalidRequestResponse
  | NotPayableResponse
  | CheckoutFailureResponse
  | CheckoutBusyResponse
  | z.output<typeof webhookRateLimitedResponseSchema>
  | z.output<typeof cardWebhookErrorResponseSchema>
  | z.output<typeof unauthorizedResponseSchema>
  | z.output<typeof receivedResponseSchema>
  | z.output<typeof storeCallbackErrorResponseSchema>;
