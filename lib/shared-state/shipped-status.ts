/**
 * Whether the store knows the `shipped` order status (docs/decisions.md#d9): after a refused write of `shipped`
 * the webhook writes `completed` and remembers the refusal for a few minutes. Shared by every instance in Redis,
 * where a shipment reads it in the entry script that takes its order's lock (a peek, lib/shared-state/request-redis.ts).
 */
import { ORDER_STATUS } from '@/lib/order-statuses';
import { KEY_PREFIX, type RedisConnection } from '@/lib/redis/connection';
import { requestKeys } from '@/lib/shared-state/request-redis';
import { withFallback, type FallbackWarning } from '@/lib/shared-state/fallback';
import type { LockPeek } from '@/lib/shared-state/order-locks';

export const SHIPPED_MISSING_TTL_MS = 10 * 60 * 1000;

const statusFor = (missing: boolean) => (missing ? ORDER_STATUS.completed : ORDER_STATUS.shipped);

export interface ShippedStatusMemory {
  /** The status to write now: `completed` while the store is remembered to lack `shipped`. */
  statusToWrite(): Promise<string>;
  reading(): ShippedStatusReading;
  rememberShippedMissing(): Promise<void>;
}

/** One shipment's read: in Redis the order's lock reads the key on its way (`peek`), or `statusToWrite` reads it. */
export interface ShippedStatusReading {
  readonly peek?: LockPeek;
  statusToWrite(): Promise<string>;
}

export class MemoryShippedStatus implements ShippedStatusMemory {
  private missingUntil = 0;

  constructor(
    private readonly ttlMs = SHIPPED_MISSING_TTL_MS,
    private readonly now: () => number = Date.now,
  ) {}

  async statusToWrite(): Promise<string> {
    return statusFor(this.now() < this.missingUntil);
  }

  reading(): ShippedStatusReading {
    return { statusToWrite: () => this.statusToWrite() };
  }

  async rememberShippedMissing(): Promise<void> {
    this.missingUntil = this.now() + this.ttlMs;
  }
}

/** One key, under the gate's hash tag so the entry script may read it; one SET when the store refuses `shipped`. */
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

  /** `read` answers when the lock did not peek (a lock held in this instance's memory alone). */
  reading(read = () => this.statusToWrite()): ShippedStatusReading {
    let missing: boolean | undefined;
    const found = (present: boolean) => void (missing = present);
    return { peek: { key: this.key, found }, statusToWrite: async () => (missing === undefined ? read() : statusFor(missing)) };
  }

  async rememberShippedMissing(): Promise<void> {
    const ttlMs = this.options.ttlMs ?? SHIPPED_MISSING_TTL_MS;
    await this.connection.run('shipped_status_write', (redis) => redis.set(this.key, '1', { expiration: { type: 'PX', value: ttlMs } }));
  }
}

/** The memory in Redis, this instance's while Redis fails; a refusal is remembered here first, whatever Redis does. */
export function shippedStatusWithFallback(
  shared: RedisShippedStatus,
  local: ShippedStatusMemory,
  warning: FallbackWarning,
): ShippedStatusMemory {
  const status = withFallback('shipped_status', warning, shared, local, ['rememberShippedMissing']);
  return {
    statusToWrite: () => status.statusToWrite(),
    reading: () => shared.reading(() => status.statusToWrite()),
    rememberShippedMissing: () => status.rememberShippedMissing(),
  };
}
