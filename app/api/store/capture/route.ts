/**
 * POST /api/store/capture — the "Capture charge" order action of the WooCommerce
 * admin (STRIPE_CAPTURE=manual), sent by the companion plugin (signed,
 * docs/decisions.md#d15): captures the order's authorized card payment and answers
 * `{captured}`, or 400 `{error}` in words for the shop owner.
 */
import { captureFromStore } from '@/lib/store-callbacks/authorization';
import { storeOrderRequestSchema } from '@/lib/store-callbacks/schemas';
import { storeCallbackRoute } from '@/lib/routes/families';

export const runtime = 'nodejs';
export const dynamic = 'force-dynamic';

export const POST = storeCallbackRoute({ route: '/api/store/capture', schema: storeOrderRequestSchema, handle: captureFromStore });
