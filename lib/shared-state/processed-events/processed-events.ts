/**
 * Remembered webhook event ids (docs/decisions.md#d12), so a delivery that was already
 * applied is acknowledged without touching the order again. Entries expire
 * after 7 days, beyond the providers' retry horizon (Stripe retries for up to
 * three days). In process memory here; shared by every instance in Redis
 * (lib/shared-state/processed-events/redis.ts) when REDIS_URL is set.
 */
import { LRUCache } from 'lru-cache';

export interface ProcessedEvents {
  has(eventId: string): Promise<boolean>;
  remember(eventId: string): Promise<void>;
}

export const PROCESSED_EVENT_TTL_MS = 7 * 24 * 60 * 60 * 1000;

export class MemoryProcessedEvents implements ProcessedEvents {
  private cache: LRUCache<string, true> | undefined;
  constructor(private readonly options: { max?: number; ttlMs?: number } = {}) {}

  /**
   * Built on first use: its arrays for 100,000 events cost tens of ms to allocate, which an
   * instance whose events live in Redis never needs, and which would land on every route's
   * first request (the services are built then).
   */
  private get seen(): LRUCache<string, true> {
    return (this.cache ??= new LRUCache({ max: this.options.max ?? 100_000, ttl: this.options.ttlMs ?? PROCESSED_EVENT_TTL_MS }));
  }

  async has(eventId: string): Promise<boolean> {
    return this.seen.has(eventId);
  }

  async remember(eventId: string): Promise<void> {
    this.seen.set(eventId, true);
  }
}
