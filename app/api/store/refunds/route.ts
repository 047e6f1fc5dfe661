/**
 * POST /api/store/refunds — a refund clicked in the WooCommerce admin, sent by
 * the companion plugin's gateway (signed with STORE_CALLBACK_SECRET,
 * docs/decisions.md#d15): refunds the WooCommerce refund's amount at Stripe, once per
 * WooCommerce refund, and answers `{refund_id, amount}` or 400 `{error}` in
 * words for the shop owner.
 */
import { storeCallbackRoute } from '@/lib/routes/families';
import { refundFromStore } from '@/lib/store-callbacks/refund';
import { storeRefundRequestSchema } from '@/lib/store-callbacks/schemas';

export const runtime = 'nodejs';
export const dynamic = 'force-dynamic';

export const POST = storeCallbackRoute({ route: '/api/store/refunds', schema: storeRefundRequestSchema, handle: refundFromStore });
