// The store's call bodies (docs/decisions.md#d15): strict, so one action's body is never read as another's.
import { z } from 'zod';

const storeId = z.int().positive().max(Number.MAX_SAFE_INTEGER);

export const storeOrderRequestSchema = z.strictObject({
  order_id: storeId.describe('The WooCommerce order.'),
});

export const storeRefundRequestSchema = storeOrderRequestSchema.extend({
  refund_id: storeId.describe('The WooCommerce refund WooCommerce created for this refund; a retry with the same id refunds once.'),
  amount: z
    .string()
    .regex(/^\d{1,12}(\.\d{1,6})?$/, 'must be a positive decimal amount such as 12.50')
    .describe('The refund amount in the order’s currency, as WooCommerce holds it.'),
  reason: z.string().max(1000).nullish().describe('The reason typed in the admin (kept in the refund’s metadata at Stripe).'),
});

export type StoreOrderRequest = z.output<typeof storeOrderRequestSchema>;
export type StoreRefundRequest = z.output<typeof storeRefundRequestSchema>;
