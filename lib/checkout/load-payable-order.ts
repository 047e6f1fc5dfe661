/** The steps both checkout endpoints share (docs/contract.md#spec-4-1 steps 4-7): token to payable order. */
import { requireSetting } from '@/lib/config';
import { OrderNotPayableError } from '@/lib/errors';
import type { RequestContext } from '@/lib/log';
import { normalizeOrder, type NormalizedOrder } from '@/lib/orders/normalize';
import { notPayableReason } from '@/lib/orders/payable';
import { verifyCheckoutToken } from '@/lib/security/checkout-token';
import type { Services } from '@/lib/services';
import type { StoreOrder } from '@/lib/store/types';

export async function orderIdFromToken(token: string, services: Services, context: RequestContext): Promise<number> {
  const orderId = await verifyCheckoutToken(token, requireSetting(services.config, 'token'));
  context.orderId = orderId;
  return orderId;
}

export async function loadPayableOrder(
  orderId: number,
  services: Services,
): Promise<{ order: StoreOrder; normalized: NormalizedOrder }> {
  const order = await services.store().getOrder(orderId);
  const reason = notPayableReason(order);
  if (reason) throw new OrderNotPayableError(orderId, order.status, reason);
  return { order, normalized: normalizeOrder(order) };
}
