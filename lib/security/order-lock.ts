/**
 * Per-order mutual exclusion (DECISIONS 12): a read-modify-write of one order
 * runs alone, so concurrent requests for the same order (a double-clicked
 * checkout, a webhook delivered twice at once) see each other's writes.
 *
 * The in-process implementation serializes callers on one instance; the Redis
 * implementation (lib/redis/order-locks.ts) fills the same interface for many.
 */
import { OrderBusyError } from '@/lib/errors';

export interface OrderLocks {
  /**
   * Runs `task` while holding `orderId`'s lock, waiting at most the lock's wait time for it.
   * One lock per order for every writer (checkout, card webhook, shipping webhook): a
   * submit-order writing `pending` must not interleave with a payment marking it paid.
   */
  withOrderLock<T>(orderId: number, task: () => Promise<T>): Promise<T>;
}

export class MemoryOrderLocks implements OrderLocks {
  /** The tail of each order's queue: a promise that settles when the last holder releases. */
  private readonly tails = new Map<string, Promise<void>>();

  constructor(private readonly waitMs = 30_000) {}

  async withOrderLock<T>(orderId: number, task: () => Promise<T>): Promise<T> {
    const key = String(orderId);
    const previous = this.tails.get(key) ?? Promise.resolve();
    let release!: () => void;
    const mine = new Promise<void>((resolve) => {
      release = resolve;
    });
    const tail = previous.then(() => mine);
    this.tails.set(key, tail);

    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), this.waitMs);
      timer.unref?.();
    });
    try {
      const outcome = await Promise.race([previous.then(() => 'acquired' as const), timedOut]);
      if (outcome === 'timeout') throw new OrderBusyError(orderId);
      return await task();
    } finally {
      clearTimeout(timer);
      release();
      // The last one out removes the key, so the map holds only orders in use.
      if (this.tails.get(key) === tail) this.tails.delete(key);
    }
  }

  /** Orders currently locked or waited on (for tests). */
  get activeKeys(): number {
    return this.tails.size;
  }
}
