/**
 * POST /api/payment-intent — creates or reuses the card payment intent of a
 * pending order and writes the customer's addresses (docs/contract.md#spec-4-1).
 * OPTIONS answers the storefront's CORS preflight.
 */
import { preparePaymentIntent } from '@/lib/checkout/payment-intent';
import { paymentIntentRequestSchema } from '@/lib/checkout/schemas';
import { checkoutRoute } from '@/lib/routes/families';
import { RATE_LIMITS } from '@/lib/shared-state/rate-limit';

export const runtime = 'nodejs';
export const dynamic = 'force-dynamic';

export const { POST, OPTIONS } = checkoutRoute({
  route: '/api/payment-intent',
  rule: RATE_LIMITS.paymentIntent,
  profile: { code: 'PAYMENT_INTENT_ERROR', notPayableMessage: 'Order cannot be paid' },
  schema: paymentIntentRequestSchema,
  handle: preparePaymentIntent,
});
