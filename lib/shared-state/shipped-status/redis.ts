/**
 * The "store has no `shipped` status" memory (lib/shared-state/shipped-status/shipped-status.ts)
 * shared by every instance: one key that expires after SHIPPED_MISSING_TTL_MS.
 * One GET per notification, one SET when the store refuses `shipped`.
 */
import { KEY_PREFIX, type RedisConnection } from '@/lib/redis/connection';
import { FALLBACK_STATUS, SHIPPED_MISSING_TTL_MS, SHIPPED_STATUS, type ShippedStatusMemory } from '@/lib/shared-state/shipped-status/shipped-status';

export class RedisShippedStatus implements ShippedStatusMemory {
  private readonly key: string;

  constructor(
    private readonly connection: RedisConnection,
    private readonly options: { prefix?: string; ttlMs?: number } = {},
  ) {
    this.key = `${options.prefix ?? KEY_PREFIX}store:shipped-status-missing`;
  }

  async statusToWrite(): Promise<string> {
    const missing = await this.connection.run('shipped_status_read', (redis) => redis.exists(this.key));
    return missing === 1 ? FALLBACK_STATUS : SHIPPED_STATUS;
  }

  async rememberShippedMissing(): Promise<void> {
    const ttlMs = this.options.ttlMs ?? SHIPPED_MISSING_TTL_MS;
    await this.connection.run('shipped_status_write', (redis) =>
      redis.set(this.key, '1', { expiration: { type: 'PX', value: ttlMs } }),
    );
  }
}
