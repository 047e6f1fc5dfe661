/**
 * Per-order mutual exclusion (docs/decisions.md#d12): a read-modify-write of one order
 * runs alone, so concurrent requests for the same order (a double-clicked
 * checkout, a webhook delivered twice at once) see each other's writes.
 *
 * The in-process implementation serializes callers on one instance; the Redis
 * implementation (lib/shared-state/order-locks/redis.ts) fills the same interface for many,
 * and lib/shared-state/fallback.ts takes both, this instance's first.
 */
import { OrderBusyError } from '@/lib/errors';
import { requestTimeLeftMs } from '@/lib/upstream/budget';

export interface OrderLocks {
  /**
   * Runs `task` while holding `orderId`'s lock, waiting for it at most as long as `lockWaitMs` allows.
   * One lock per order for every writer (checkout, card webhook, shipping webhook): a
   * submit-order writing `pending` must not interleave with a payment marking it paid.
   * `peek`: a key that locks kept in Redis read in the round trip that takes the lock (lib/redis/gate.ts),
   * so the task need not read it apart; other locks ignore it, and the task reads it itself.
   */
  withOrderLock<T>(orderId: number, task: () => Promise<T>, peek?: LockPeek): Promise<T>;
  /**
   * For locks that keep the processed events beside them (Redis, lib/redis/gate.ts): checks
   * whether `eventKey` is remembered in the same round trip as the lock, answers a remembered
   * one as a duplicate without taking the lock, and remembers the event with the release when
   * `task` asks to (only after its effects are written). Without it, lib/webhooks/card/exactly-once.ts
   * checks and remembers through ProcessedEvents under `withOrderLock`.
   */
  withEventLock?<T>(orderId: number, eventKey: string, task: () => Promise<EventTaskResult<T>>): Promise<EventLockResult<T>>;
}

/** A key read with the lock, once it is taken: `found` is told whether the key exists, before the task runs. */
export interface LockPeek {
  readonly key: string;
  found(present: boolean): void;
}

export interface EventTaskResult<T> {
  result: T;
  /** Whether the event is to be remembered as applied. */
  remember: boolean;
}

export type EventLockResult<T> = { duplicate: true } | { duplicate: false; result: T };

/** The longest a writer waits for a busy order, inside a request or not (the one home of this figure). */
export const ORDER_LOCK_WAIT_MS = 30_000;

export interface LockWait {
  /** The longest wait (ORDER_LOCK_WAIT_MS unless a test says otherwise). */
  waitMs: number;
  /**
   * The part of the request's deadline kept for the work under the lock
   * (lib/services.ts: one UPSTREAM_TIMEOUT_MS): a writer that would get the
   * lock with less left answers busy instead of starting work it could only
   * cut short with a timeout.
   */
  reserveMs: number;
}

export const DEFAULT_LOCK_WAIT: LockWait = { waitMs: ORDER_LOCK_WAIT_MS, reserveMs: 0 };

/**
 * How long a writer may wait for the lock from now: at most `waitMs`, and never
 * into the reserve of its request's deadline (lib/upstream/budget.ts), so the
 * wait counts against the request's bound instead of adding to it. Zero or
 * less: take a free lock, but do not wait for a busy one.
 */
export function lockWaitMs(wait: LockWait, now = Date.now()): number {
  return Math.min(wait.waitMs, requestTimeLeftMs(now) - wait.reserveMs);
}

export class MemoryOrderLocks implements OrderLocks {
  /** The tail of each order's queue: a promise that settles when the last holder releases. */
  private readonly tails = new Map<string, Promise<void>>();
  private readonly wait: LockWait;

  constructor(wait: Partial<LockWait> = {}) {
    this.wait = { ...DEFAULT_LOCK_WAIT, ...wait };
  }

  async withOrderLock<T>(orderId: number, task: () => Promise<T>): Promise<T> {
    const key = String(orderId);
    const waitMs = Math.max(0, lockWaitMs(this.wait));
    const previous = this.tails.get(key) ?? Promise.resolve();
    let release!: () => void;
    const mine = new Promise<void>((resolve) => {
      release = resolve;
    });
    const tail = previous.then(() => mine);
    this.tails.set(key, tail);

    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), waitMs);
      timer.unref?.();
    });
    let acquired = false;
    try {
      const outcome = await Promise.race([previous.then(() => 'acquired' as const), timedOut]);
      if (outcome === 'timeout') throw new OrderBusyError(orderId);
      acquired = true;
      return await task();
    } finally {
      clearTimeout(timer);
      release();
      // The last one out removes the key, so the map holds only orders in use. A waiter that gave up
      // leaves while the holder still works: the queue must stay until the holder is done too, or the
      // next writer would find the order free and run beside the holder.
      const forget = () => {
        if (this.tails.get(key) === tail) this.tails.delete(key);
      };
      if (acquired) forget();
      else void tail.then(forget);
    }
  }

  /** Orders currently locked or waited on (for tests). */
  get activeKeys(): number {
    return this.tails.size;
  }
}
