/**
 * Exactly once (docs/decisions.md#d12): an event changes its order once, however often
 * and however concurrently the provider delivers it.
 *
 * Two records of an applied event, for two different jobs:
 * - the receipt on the order (lib/orders/receipts.ts), written in the same
 *   store update as the change, is the proof: each handler checks the order
 *   it has just read for it. It cannot be lost apart from the change, so a
 *   Redis outage or flush, or an answer lost after the store committed the
 *   write, never lets an event apply twice;
 * - the remembered id (in Redis when REDIS_URL is set) is the fast path: a
 *   duplicate answered without a store call. It is written only after the
 *   change succeeded: a store error leaves it unremembered, the request
 *   answers 400, and the provider's retry either applies the change or finds
 *   its receipt.
 *
 * The check, the change and the remembering all happen under the order's
 * lock, so eight simultaneous deliveries run one after another and all but
 * the first find the event remembered (or its receipt). With Redis the check
 * is part of taking the lock and the remembering part of releasing it (two
 * round trips, lib/redis/gate.ts), and a delivery that finds its event
 * remembered does not take the lock at all: the remembered id is written
 * before the lock is released, so a writer that gets the lock after the first
 * one finds it. The lock is what the
 * receipt needs besides: WooCommerce has no conditional update, so two
 * writers that read the order at once would both miss the receipt.
 */
import type { Services } from '@/lib/services';

export const DUPLICATE_EVENT = 'duplicate_event';

/** Namespaced, so a shared store of processed ids can hold other providers' ids too. */
export function processedEventKey(eventId: string): string {
  return `cardprovider:${eventId}`;
}

export async function applyEventOnce<Outcome>(
  services: Pick<Services, 'cardEventLocks' | 'processedEvents'>,
  orderId: number,
  eventId: string,
  apply: () => Promise<Outcome>,
): Promise<Outcome | typeof DUPLICATE_EVENT> {
  const key = processedEventKey(eventId);
  const locks = services.cardEventLocks;
  if (locks.withEventLock) {
    // Redis: the check rides in the lock's round trip, the remembering in the release's.
    const done = await locks.withEventLock(orderId, key, async () => {
      const outcome = await apply();
      return { result: outcome, remember: true };
    });
    return done.duplicate ? DUPLICATE_EVENT : done.result;
  }
  return locks.withOrderLock(orderId, async () => {
    if (await services.processedEvents.has(key)) return DUPLICATE_EVENT;
    const outcome = await apply();
    await services.processedEvents.remember(key);
    return outcome;
  });
}
