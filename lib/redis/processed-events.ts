/**
 * Processed webhook event ids shared by every instance (DECISIONS 12): an
 * event applied on one instance is answered without effect on every other.
 * One key per event, expiring after PROCESSED_EVENT_TTL_MS (7 days, beyond
 * Stripe's 3 days of retries). `has` is one EXISTS, `remember` one SET PX.
 */
import { KEY_PREFIX, type RedisConnection } from '@/lib/redis/connection';
import { PROCESSED_EVENT_TTL_MS, type ProcessedEvents } from '@/lib/security/processed-events';

export class RedisProcessedEvents implements ProcessedEvents {
  private readonly prefix: string;
  private readonly ttlMs: number;
  /** Shared and durable: it outlives every instance, for PROCESSED_EVENT_TTL_MS. */
  readonly remembersSince = undefined;

  constructor(
    private readonly connection: RedisConnection,
    options: { prefix?: string; ttlMs?: number } = {},
  ) {
    this.prefix = `${options.prefix ?? KEY_PREFIX}event:`;
    this.ttlMs = options.ttlMs ?? PROCESSED_EVENT_TTL_MS;
  }

  async has(eventId: string): Promise<boolean> {
    return this.connection.run('event_check', async (redis) => (await redis.exists(this.prefix + eventId)) === 1);
  }

  async remember(eventId: string): Promise<void> {
    await this.connection.run('event_record', (redis) =>
      redis.set(this.prefix + eventId, '1', { expiration: { type: 'PX', value: this.ttlMs } }),
    );
  }
}
