/** What the checkout use cases share: token to payable order (docs/contract.md#spec-4-1 steps 4-7), key digests, the pause on a busy key. */
import { createHash } from 'node:crypto';
import { requireSetting } from '@/lib/config';
import { OrderNotPayableError } from '@/lib/errors';
import type { RequestContext } from '@/lib/log';
import { normalizeOrder } from '@/lib/orders/normalize';
import { notPayableReason } from '@/lib/orders/order-payment';
import { verifyCheckoutToken } from '@/lib/security/checkout-token';
import type { Services } from '@/lib/services';
import { MIN_ATTEMPT_MS, requestTimeLeftMs } from '@/lib/upstream/budget';

export async function orderIdFromToken(token: string, services: Services, context: RequestContext): Promise<number> {
  const orderId = await verifyCheckoutToken(token, requireSetting(services.config, 'token'));
  context.orderId = orderId;
  return orderId;
}

export type PayableOrder = Awaited<ReturnType<typeof loadPayableOrder>>;

export async function loadPayableOrder(orderId: number, services: Services) {
  const order = await services.store().getOrder(orderId);
  const reason = notPayableReason(order);
  if (reason) throw new OrderNotPayableError(orderId, order.status, reason);
  return { order, normalized: normalizeOrder(order) };
}

/** A Stripe create takes about a second at most. */
const IN_PROGRESS_PAUSES_MS = [100, 250, 500, 1000];

/** While Stripe runs another call with the same idempotency key: waits before try `attempt` + 1, or false when none is left. */
export async function pauseBeforeRetry(attempt: number): Promise<boolean> {
  const wait = IN_PROGRESS_PAUSES_MS[attempt];
  if (wait === undefined || requestTimeLeftMs() - wait <= MIN_ATTEMPT_MS) return false;
  await new Promise<void>((resolve) => setTimeout(resolve, wait));
  return true;
}

/** The first `length` hex digits of the SHA-256 of `parts` as JSON: an idempotency key's part. */
export function digestOf(parts: unknown, length: number): string {
  return createHash('sha256').update(JSON.stringify(parts)).digest('hex').slice(0, length);
}
