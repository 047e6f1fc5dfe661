/**
 * Per-order locks (docs/decisions.md#d12): a read-modify-write of one order runs alone, on this instance (memory) and
 * across instances (Redis: taken and released by lib/shared-state/request-redis.ts's scripts, retried with a short
 * jittered pause). A holder that outlives the TTL does no harm: every writer re-reads the order under the lock.
 */
import { randomInt, randomUUID } from 'node:crypto';
import { OrderBusyError, SharedStateUnavailableError } from '@/lib/errors';
import { atMostEvery, log } from '@/lib/log';
import { KEY_PREFIX, type RedisConnection } from '@/lib/redis/connection';
import type { FallbackWarning } from '@/lib/shared-state/fallback';
import { PROCESSED_EVENT_TTL_MS } from '@/lib/shared-state/processed-events';
import { takeDeferredHit } from '@/lib/shared-state/rate-limit';
import {
  countCheckLock,
  countLocallyAndRethrow,
  rememberUnlock,
  type CountCheckLockReply,
  type CountCheckLockRequest,
} from '@/lib/shared-state/request-redis';
import { orTimeout, REQUEST_BUDGET_TIMEOUTS, requestTimeLeftMs } from '@/lib/upstream/budget';

export interface OrderLocks {
  /**
   * Runs `task` holding `orderId`'s lock, one for every writer, waiting at most as long as `lockWaitMs` allows.
   * `peek`: a key the Redis locks read in the round trip that takes the lock; other locks ignore it.
   */
  withOrderLock<T>(orderId: number, task: () => Promise<T>, peek?: LockPeek): Promise<T>;
  /**
   * Redis only: checks `eventKey` in the lock's round trip (a remembered one is a duplicate, no lock taken) and
   * remembers it with the release when `task` asks to. Without it, lib/card-payments/apply-event.ts uses ProcessedEvents.
   */
  withEventLock?<T>(orderId: number, eventKey: string, task: EventTask<T>): Promise<EventLockResult<T>>;
}

/** A key read with the lock, once it is taken: `found` is told whether the key exists, before the task runs. */
export interface LockPeek {
  readonly key: string;
  found(present: boolean): void;
}

type EventTask<T> = () => Promise<{ result: T; remember: boolean }>;

export type EventLockResult<T> = { duplicate: true } | { duplicate: false; result: T };

/** The longest a writer waits for a busy order, inside a request or not (the one home of this figure). */
export const ORDER_LOCK_WAIT_MS = 30_000;

/** `reserveMs`: the part of the request's deadline kept for the work under the lock: with less left, the answer is busy. */
type LockWait = { waitMs?: number; reserveMs?: number };

/** How long a writer may wait from now: at most `waitMs`, never into its deadline's reserve (<= 0: never wait). */
function lockWaitMs({ waitMs = ORDER_LOCK_WAIT_MS, reserveMs = 0 }: LockWait): number {
  return Math.min(waitMs, requestTimeLeftMs() - reserveMs);
}

export class MemoryOrderLocks implements OrderLocks {
  /** The tail of each order's queue: a promise that settles when the last holder releases. */
  private readonly tails = new Map<number, Promise<void>>();

  constructor(private readonly wait: LockWait = {}) {}

  async withOrderLock<T>(orderId: number, task: () => Promise<T>): Promise<T> {
    const waitMs = Math.max(0, lockWaitMs(this.wait));
    const previous = this.tails.get(orderId) ?? Promise.resolve();
    let release!: () => void;
    const mine = new Promise<void>((resolve) => {
      release = resolve;
    });
    const tail = previous.then(() => mine);
    this.tails.set(orderId, tail);
    let acquired = false;
    try {
      if ((await orTimeout(previous.then(() => 'acquired' as const), waitMs, 'timeout')) === 'timeout') throw new OrderBusyError(orderId);
      acquired = true;
      return await task();
    } finally {
      release();
      // The last one out removes the key. A waiter that gave up leaves it until the holder is done, or the next
      // writer would find the order free and run beside the holder.
      const forget = () => {
        if (this.tails.get(orderId) === tail) this.tails.delete(orderId);
      };
      if (acquired) forget();
      else void tail.then(forget);
    }
  }

  get activeKeys(): number {
    return this.tails.size;
  }
}

/** Time for the holder's work that is not an upstream call (parsing, Redis calls), after its upstream deadline. */
const LOCK_TTL_MARGIN_MS = 5_000;

/** As long as its holder can live: the request's whole upstream deadline plus a margin (35 s with the default 10 s). */
export function orderLockTtlMs(upstreamTimeoutMs: number): number {
  return REQUEST_BUDGET_TIMEOUTS * upstreamTimeoutMs + LOCK_TTL_MARGIN_MS;
}

const FIRST_RETRY_MS = 20;
const MAX_RETRY_MS = 250;
const LATE_WARNING_INTERVAL_MS = 60_000;

export class RedisOrderLocks implements OrderLocks {
  private readonly prefix: string;

  constructor(
    private readonly connection: RedisConnection,
    private readonly wait: LockWait & { ttlMs: number; prefix?: string },
  ) {
    this.prefix = wait.prefix ?? KEY_PREFIX;
  }

  async withOrderLock<T>(orderId: number, task: () => Promise<T>, peek?: LockPeek): Promise<T> {
    const token = randomUUID();
    await this.acquire(orderId, token, undefined, peek);
    try {
      return await task();
    } finally {
      await this.release(orderId, token);
    }
  }

  async withEventLock<T>(orderId: number, eventKey: string, task: EventTask<T>): Promise<EventLockResult<T>> {
    const token = randomUUID();
    if ((await this.acquire(orderId, token, eventKey)) === 'remembered') return { duplicate: true };
    const outcome = await task().catch(async (error: unknown) => {
      await this.release(orderId, token);
      throw error;
    });
    // Remembered with the release, once its effects are written; unlike a bare release this one may fail the request.
    const remember = { eventKey, ttlMs: PROCESSED_EVENT_TTL_MS };
    if (outcome.remember) await this.connection.run('lock_release', rememberUnlock(this.prefix, orderId, token, remember));
    else await this.release(orderId, token);
    return { duplicate: false, result: outcome.result };
  }

  /**
   * Takes the lock, or answers `remembered` (no lock), or throws OrderBusyError past the wait, or
   * SharedStateUnavailableError when Redis failed before it could have applied the script: the only failure a caller
   * may fall back from. The first attempt carries the request's deferred rate-limit hit. Once the order was seen held,
   * a Redis failure is answered busy: that holder may still be writing.
   */
  private async acquire(orderId: number, token: string, eventKey?: string, peek?: LockPeek): Promise<'locked' | 'remembered'> {
    const deadline = Date.now() + lockWaitMs(this.wait);
    let seenHeld = false;
    const lock = { orderId, token, ttlMs: this.wait.ttlMs, peekKey: peek?.key };
    let hit = takeDeferredHit();
    for (let attempt = 0; ; attempt += 1) {
      const answer = await this.tryOnce({ hit, eventKey, lock }, deadline).catch((error: unknown) => {
        if (seenHeld && error instanceof SharedStateUnavailableError) {
          log.warn('redis.lock_lost_while_waiting', { orderId, error: error.kind });
          throw new OrderBusyError(orderId);
        }
        throw error;
      });
      hit = undefined;
      if (answer.remembered) return 'remembered';
      if (answer.locked) {
        peek?.found(answer.peeked);
        return 'locked';
      }
      seenHeld = true;
      const pause = Math.min(FIRST_RETRY_MS * 2 ** attempt, MAX_RETRY_MS);
      if (Date.now() + pause > deadline) throw new OrderBusyError(orderId);
      await new Promise((resolve) => setTimeout(resolve, pause / 2 + randomInt(0, Math.ceil(pause / 2) + 1)));
    }
  }

  /**
   * One COUNT_CHECK_LOCK. A script that timed out may still be applied, so it is no outage to fall back from (this
   * instance could write beside a holder): its late answer is awaited as long as the writer may wait. No answer by
   * then, or a broken connection, leaves the lock in doubt: busy, with a release queued behind the script, and the
   * carried hit counted in memory.
   */
  private async tryOnce(request: CountCheckLockRequest & { lock: { orderId: number; token: string } }, deadline: number) {
    const { hit, lock: { orderId, token } } = request;
    const call = countCheckLock(this.prefix, request);
    let sent: Promise<CountCheckLockReply> | undefined;
    let reply: CountCheckLockReply;
    try {
      reply = await this.connection.run('lock_acquire', (redis) => (sent = call.send(redis)));
    } catch (error) {
      const timedOut = error instanceof SharedStateUnavailableError && error.details?.cause === 'TimeoutError';
      if (!timedOut || sent === undefined) return countLocallyAndRethrow(hit, error);
      this.warnLateAnswer(orderId);
      const late = await orTimeout(
        sent.then((value) => ({ value }), () => 'connection_failed' as const),
        deadline - Date.now(),
        'no_answer',
      );
      if (typeof late === 'string') {
        void this.connection.run('lock_release', rememberUnlock(this.prefix, orderId, token)).catch(() => undefined);
        log.warn('redis.lock_in_doubt', { orderId, cause: late });
        if (hit) await hit.countLocally();
        throw new OrderBusyError(orderId);
      }
      reply = late.value;
    }
    return call.read(reply);
  }

  /** At most one warning a minute that Redis answers locks later than REDIS_TIMEOUT_MS. */
  private readonly warnLateAnswer = atMostEvery(LATE_WARNING_INTERVAL_MS, (orderId: number) =>
    log.warn('redis.lock_answer_late', {
      orderId,
      message: 'Redis did not answer a lock within REDIS_TIMEOUT_MS: waiting for its answer instead of falling back, so writers stay serialized',
    }),
  );

  /** Never throws: a lock that cannot be released expires with its TTL. */
  private async release(orderId: number, token: string): Promise<void> {
    try {
      await this.connection.run('lock_release', rememberUnlock(this.prefix, orderId, token));
    } catch (error) {
      log.warn('redis.lock_release_failed', { orderId, error: error instanceof SharedStateUnavailableError ? error.kind : 'unexpected' });
    }
  }
}

/**
 * Checkout's and shipping's locks: this instance's first, always, then Redis'. Falls back to this instance's alone only
 * when Redis failed before it could have applied a `SET` (SharedStateUnavailableError); every other doubt is busy.
 */
export function orderLocksWithFallback(shared: RedisOrderLocks, local: OrderLocks, warning: FallbackWarning): OrderLocks {
  return {
    withOrderLock: (orderId, task, peek) =>
      local.withOrderLock(orderId, async () => {
        let started = false;
        const once = () => {
          started = true;
          return task();
        };
        try {
          return await shared.withOrderLock(orderId, once, peek);
        } catch (error) {
          // Only a lock that could not be taken falls back; a task that ran is never run twice.
          if (started || !(error instanceof SharedStateUnavailableError)) throw error;
          warning.note('order_locks', error);
          return task();
        }
      }),
  };
}

/** The card webhook's locks: this instance's, then Redis', no fallback (Stripe retries a delivery that fails). */
export function orderLocksWithoutFallback(shared: RedisOrderLocks, local: OrderLocks): OrderLocks {
  return {
    withOrderLock: (orderId, task, peek) => local.withOrderLock(orderId, () => shared.withOrderLock(orderId, task, peek)),
    withEventLock: (orderId, eventKey, task) => local.withOrderLock(orderId, () => shared.withEventLock(orderId, eventKey, task)),
  };
}
