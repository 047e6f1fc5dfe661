// Exactly once (docs/decisions.md#d12, docs/integrations/stripe.md#delivered-twice-applied-once): the receipt on the
// order is the proof, the remembered id the fast path, written only after the change and before the lock is released.
import type { Services } from '@/lib/services';

export const DUPLICATE_EVENT = 'duplicate_event';

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
