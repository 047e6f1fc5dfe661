/**
 * The "store has no `shipped` status" memory (lib/shared-state/shipped-status/shipped-status.ts)
 * shared by every instance: one key that expires after SHIPPED_MISSING_TTL_MS.
 * A shipment reads it in the entry script that takes its order's lock (the
 * lock's peek, lib/shared-state/request-redis.ts), so it costs no round trip of its own; it is
 * under the gate's hash tag for that. One SET when the store refuses `shipped`.
 */
import { KEY_PREFIX, type RedisConnection } from '@/lib/redis/connection';
import { requestKeys } from '@/lib/shared-state/request-redis';
import {
  FALLBACK_STATUS,
  SHIPPED_MISSING_TTL_MS,
  SHIPPED_STATUS,
  type ShippedStatusMemory,
  type ShippedStatusReading,
} from '@/lib/shared-state/shipped-status/shipped-status';

const statusFor = (missing: boolean) => (missing ? FALLBACK_STATUS : SHIPPED_STATUS);

export class RedisShippedStatus implements ShippedStatusMemory {
  private readonly key: string;

  constructor(
    private readonly connection: RedisConnection,
    private readonly options: { prefix?: string; ttlMs?: number } = {},
  ) {
    this.key = requestKeys(options.prefix ?? KEY_PREFIX).shippedStatusMissing;
  }

  async statusToWrite(): Promise<string> {
    const missing = await this.connection.run('shipped_status_read', (redis) => redis.exists(this.key));
    return statusFor(missing === 1);
  }

  reading(): ShippedStatusReading {
    let missing: boolean | undefined;
    return {
      peek: {
        key: this.key,
        found: (present) => {
          missing = present;
        },
      },
      statusToWrite: async () => (missing === undefined ? this.statusToWrite() : statusFor(missing)),
    };
  }

  async rememberShippedMissing(): Promise<void> {
    const ttlMs = this.options.ttlMs ?? SHIPPED_MISSING_TTL_MS;
    await this.connection.run('shipped_status_write', (redis) =>
      redis.set(this.key, '1', { expiration: { type: 'PX', value: ttlMs } }),
    );
  }
}
