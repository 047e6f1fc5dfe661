/**
 * POST /api/express-checkout/shipping-rate — writes the wallet's chosen rate and address to the order and
 * brings the payment intent to the new total (docs/contract.md#express-checkout).
 */
import { chooseShippingRate } from '@/lib/checkout/express';
import { shippingRateRequestSchema } from '@/lib/checkout/express-schemas';
import { checkoutRoute } from '@/lib/routes/families';
import { RATE_LIMITS } from '@/lib/shared-state/rate-limit';

export const runtime = 'nodejs';
export const dynamic = 'force-dynamic';

export const { POST, OPTIONS } = checkoutRoute({
  route: '/api/express-checkout/shipping-rate',
  rule: RATE_LIMITS.shippingRate,
  profile: { code: 'EXPRESS_CHECKOUT_ERROR', notPayableMessage: 'Order cannot be paid' },
  schema: shippingRateRequestSchema,
  handle: chooseShippingRate,
});
