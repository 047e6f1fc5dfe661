/**
 * POST /api/store/cancel-authorization — an order cancelled in the WooCommerce
 * admin, sent by the companion plugin (signed, docs/decisions.md#d15): releases the
 * order's card authorization that was not captured, and answers `{canceled}`.
 */
import { cancelAuthorizationFromStore } from '@/lib/store-callbacks/authorization';
import { storeOrderRequestSchema } from '@/lib/store-callbacks/schemas';
import { storeCallbackRoute } from '@/lib/routes/families';

export const runtime = 'nodejs';
export const dynamic = 'force-dynamic';

export const POST = storeCallbackRoute({
  route: '/api/store/cancel-authorization',
  schema: storeOrderRequestSchema,
  handle: cancelAuthorizationFromStore,
});
