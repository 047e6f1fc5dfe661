/**
 * Processed webhook event ids shared by every instance (docs/decisions.md#d12): an
 * event applied on one instance is answered without effect on every other.
 * One key per event, expiring after PROCESSED_EVENT_TTL_MS (7 days, beyond
 * Stripe's 3 days of retries). The card webhook checks and remembers them in
 * the order lock's own scripts (lib/redis/gate.ts); `has` here serves an event
 * whose order is not known yet, and carries the request's rate-limit hit, so
 * it is still one round trip. `remember` is one SET PX.
 */
import { KEY_PREFIX, type RedisConnection } from '@/lib/redis/connection';
import { entryCall, fallBackHit, gateKeys } from '@/lib/redis/gate';
import { claimPendingRateLimit } from '@/lib/shared-state/rate-limit/pending';
import { PROCESSED_EVENT_TTL_MS, type ProcessedEvents } from '@/lib/shared-state/processed-events/processed-events';

export class RedisProcessedEvents implements ProcessedEvents {
  private readonly prefix: string;
  private readonly ttlMs: number;
  constructor(
    private readonly connection: RedisConnection,
    options: { prefix?: string; ttlMs?: number } = {},
  ) {
    this.prefix = options.prefix ?? KEY_PREFIX;
    this.ttlMs = options.ttlMs ?? PROCESSED_EVENT_TTL_MS;
  }

  async has(eventId: string): Promise<boolean> {
    const hit = claimPendingRateLimit();
    const call = entryCall(this.prefix, { hit, eventKey: eventId });
    const answer = await this.connection.run('event_check', call.send).catch((error: unknown) => fallBackHit(hit, error));
    return call.read(answer).remembered;
  }

  async remember(eventId: string): Promise<void> {
    await this.connection.run('event_record', (redis) =>
      redis.set(gateKeys(this.prefix).event(eventId), '1', { expiration: { type: 'PX', value: this.ttlMs } }),
    );
  }
}
