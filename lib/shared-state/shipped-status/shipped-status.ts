/**
 * Whether the store knows the `shipped` order status (docs/decisions.md#d9).
 *
 * Stock WooCommerce has no `shipped` status; a plugin adds it. When a write of
 * `shipped` is refused with 400 `rest_invalid_param`, the webhook writes
 * `completed` instead and remembers the refusal for a few minutes, so the next
 * notifications go straight to `completed` (one write, not two). The memory
 * expires, so a shop that installs the status plugin is picked up again
 * without a restart. It is knowledge about the store, shared by every instance
 * when Redis is configured (lib/shared-state/shipped-status/redis.ts).
 */
import { ORDER_STATUS } from '@/lib/order-statuses';
import type { LockPeek } from '@/lib/shared-state/order-locks';

export const SHIPPED_STATUS = ORDER_STATUS.shipped;
export const FALLBACK_STATUS = ORDER_STATUS.completed;
export const SHIPPED_MISSING_TTL_MS = 10 * 60 * 1000;

export interface ShippedStatusMemory {
  /** The status to write now: `completed` while the store is remembered to lack `shipped`. */
  statusToWrite(): Promise<string>;
  /** One shipment's read of the memory, which the order's lock may carry (below). */
  reading(): ShippedStatusReading;
  rememberShippedMissing(): Promise<void>;
}

/**
 * A shipment's read of the memory. A memory kept in Redis hands the order's
 * lock a `peek` at its key, so the lock's own round trip reads it; its
 * `statusToWrite` then answers without one, and reads the memory itself only
 * when the lock did not (a lock held in this instance's memory alone).
 */
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
    return this.now() < this.missingUntil ? FALLBACK_STATUS : SHIPPED_STATUS;
  }

  reading(): ShippedStatusReading {
    return { statusToWrite: () => this.statusToWrite() };
  }

  async rememberShippedMissing(): Promise<void> {
    this.missingUntil = this.now() + this.ttlMs;
  }
}
