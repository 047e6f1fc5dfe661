/**
 * POST /api/express-checkout/shipping-rates — the order's shipping rates at the address a wallet reports,
 * each with the order's total (docs/contract.md#express-checkout). Changes nothing.
 */
import { quoteShippingRates } from '@/lib/checkout/express';
import { shippingRatesRequestSchema } from '@/lib/checkout/express-schemas';
import { checkoutRoute } from '@/lib/routes/families';
import { RATE_LIMITS } from '@/lib/shared-state/rate-limit';

export const runtime = 'nodejs';
export const dynamic = 'force-dynamic';

export const { POST, OPTIONS } = checkoutRoute({
  route: '/api/express-checkout/shipping-rates',
  rule: RATE_LIMITS.shippingRates,
  profile: { code: 'EXPRESS_CHECKOUT_ERROR', notPayableMessage: 'Order cannot be paid' },
  schema: shippingRatesRequestSchema,
  handle: quoteShippingRates,
});
