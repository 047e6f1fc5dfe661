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
  /**
   * Since when (ms) every applied event is known to this memory: the start of the
   * process for the in-process memory, which a restart empties; undefined for a
   * durable memory (Redis) that outlives instances. The order's receipts say
   * whether an older event was applied; payment reconciliation tells the handlers
   * when an event is older than this, for orders written before receipts existed.
   */
  readonly remembersSince: number | undefined;
}

export const PROCESSED_EVENT_TTL_MS = 7 * 24 * 60 * 60 * 1000;

export class MemoryProcessedEvents implements ProcessedEvents {
  private cache: LRUCache<string, true> | undefined;
  readonly remembersSince = Date.now();

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
