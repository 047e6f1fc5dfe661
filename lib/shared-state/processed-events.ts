/**
 * Remembered webhook event ids (docs/decisions.md#d12): a delivery already applied is acknowledged without touching
 * the order again. Kept 7 days, beyond Stripe's 3 days of retries; in memory, or in Redis for every instance.
 */
import { LRUCache } from 'lru-cache';
import { KEY_PREFIX, type RedisConnection } from '@/lib/redis/connection';
import { takeDeferredHit } from '@/lib/shared-state/rate-limit';
import { countCheckLock, countLocallyAndRethrow, requestKeys } from '@/lib/shared-state/request-redis';

export interface ProcessedEvents {
  has(eventId: string): Promise<boolean>;
  remember(eventId: string): Promise<void>;
}

export const PROCESSED_EVENT_TTL_MS = 7 * 24 * 60 * 60 * 1000;

export class MemoryProcessedEvents implements ProcessedEvents {
  private cache: LRUCache<string, true> | undefined;

  /** Built on first use: its arrays cost tens of ms, which an instance keeping events in Redis never needs. */
  private get seen(): LRUCache<string, true> {
    return (this.cache ??= new LRUCache({ max: 100_000, ttl: PROCESSED_EVENT_TTL_MS }));
  }

  async has(eventId: string): Promise<boolean> {
    return this.seen.has(eventId);
  }

  async remember(eventId: string): Promise<void> {
    this.seen.set(eventId, true);
  }
}

/**
 * In Redis, one key per event. The card webhook checks and remembers them in the order lock's scripts; `has` serves an
 * event whose order is not known yet, and carries the request's deferred rate-limit hit (one round trip still).
 */
export class RedisProcessedEvents implements ProcessedEvents {
  constructor(
    private readonly connection: RedisConnection,
    private readonly options: { prefix?: string } = {},
  ) {}

  async has(eventId: string): Promise<boolean> {
    const hit = takeDeferredHit();
    const call = countCheckLock(this.options.prefix ?? KEY_PREFIX, { hit, eventKey: eventId });
    const answer = await this.connection.run('event_check', call.send).catch((error: unknown) => countLocallyAndRethrow(hit, error));
    return call.read(answer).remembered;
  }

  async remember(eventId: string): Promise<void> {
    await this.connection.run('event_record', (redis) =>
      redis.set(requestKeys(this.options.prefix ?? KEY_PREFIX).event(eventId), '1', { expiration: { type: 'PX', value: PROCESSED_EVENT_TTL_MS } }),
    );
  }
}
