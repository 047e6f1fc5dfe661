/**
 * POST /api/submit-order — submits a pending order for manual payment
 * verification and writes the customer's addresses (docs/contract.md#spec-4-2).
 * OPTIONS answers the storefront's CORS preflight.
 */
import { submitOrderRequestSchema } from '@/lib/checkout/schemas';
import { submitOrderForManualPayment } from '@/lib/checkout/submit-order';
import { checkoutRoute } from '@/lib/routes/families';
import { RATE_LIMITS } from '@/lib/shared-state/rate-limit';

export const runtime = 'nodejs';
export const dynamic = 'force-dynamic';

export const { POST, OPTIONS } = checkoutRoute({
  route: '/api/submit-order',
  rule: RATE_LIMITS.submitOrder,
  profile: { code: 'SUBMIT_ORDER_ERROR', notPayableMessage: 'Order cannot be submitted for payment' },
  schema: submitOrderRequestSchema,
  handle: submitOrderForManualPayment,
});
