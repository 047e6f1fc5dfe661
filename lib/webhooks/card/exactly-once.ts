/**
 * Exactly once (DECISIONS 12): an event changes its order once, however often
 * and however concurrently the provider delivers it.
 *
 * The check, the change and the remembering all happen under the order's
 * lock, so eight simultaneous deliveries run one after another and all but
 * the first find the event remembered. The id is remembered only after the
 * change succeeded: a store error leaves it unremembered, the request answers
 * 400, and the provider's retry applies the change.
 */
import type { Services } from '@/lib/services';

export const DUPLICATE_EVENT = 'duplicate_event';

/** Namespaced, so a shared store of processed ids can hold other providers' ids too. */
export function processedEventKey(eventId: string): string {
  return `cardprovider:${eventId}`;
}

export async function applyEventOnce<Outcome extends string>(
  services: Pick<Services, 'cardEventLocks' | 'processedEvents'>,
  orderId: number,
  eventId: string,
  apply: () => Promise<Outcome>,
): Promise<Outcome | typeof DUPLICATE_EVENT> {
  const key = processedEventKey(eventId);
  return services.cardEventLocks.withOrderLock(orderId, async () => {
    if (await services.processedEvents.has(key)) return DUPLICATE_EVENT;
    const outcome = await apply();
    await services.processedEvents.remember(key);
    return outcome;
  });
}
