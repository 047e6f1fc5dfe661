/**
 * Per-order locks shared by every instance (docs/decisions.md#d12), so a double-click
 * that lands on two instances, or one event delivered to two, still runs one
 * read-modify-write at a time.
 *
 * Taken with `SET key token NX PX ttl` inside the ENTRY script (lib/redis/gate.ts,
 * one round trip, with the request's rate-limit hit and, for an event, the
 * check whether it was applied), released by the LEAVE script that deletes the
 * key only while it still holds this holder's token (one round trip, which also
 * remembers the applied event), so a holder whose lock expired can never
 * release its successor's.
 * A waiter retries with a short, jittered, growing pause until its wait is
 * over (lib/shared-state/order-locks/order-locks.ts, `lockWaitMs`: never past its request's
 * deadline), then gives up with OrderBusyError.
 *
 * The TTL frees the order when a holder dies. A holder that outlives it lets
 * the next writer in early; that writer does no harm because every writer
 * re-reads the order after taking the lock and checks its status (payable,
 * paid, shippable) and the card webhook checks the processed events there too.
 */
import { randomInt, randomUUID } from 'node:crypto';
import { OrderBusyError, SharedStateUnavailableError } from '@/lib/errors';
import { log } from '@/lib/log';
import { KEY_PREFIX, type RedisConnection } from '@/lib/redis/connection';
import { entryCall, fallBackHit, leaveCall, type EntryAnswer, type EntryReply } from '@/lib/redis/gate';
import {
  DEFAULT_LOCK_WAIT,
  lockWaitMs,
  type EventLockResult,
  type EventTaskResult,
  type LockPeek,
  type LockWait,
  type OrderLocks,
} from '@/lib/shared-state/order-locks/order-locks';
import { claimPendingRateLimit, type ClaimedHit } from '@/lib/shared-state/rate-limit/pending';
import { PROCESSED_EVENT_TTL_MS } from '@/lib/shared-state/processed-events/processed-events';
import { REQUEST_BUDGET_TIMEOUTS } from '@/lib/upstream/budget';

/**
 * Time for the holder's work that is not an upstream call (parsing, building
 * the write, the lock's own and the event memory's Redis calls, each bounded by
 * REDIS_TIMEOUT_MS), after the request's upstream deadline.
 */
export const LOCK_TTL_MARGIN_MS = 5_000;

/**
 * A lock lives as long as its holder can: every upstream call of a request (or
 * of a cron unit, lib/cron/budget.ts) ends by the request's deadline,
 * REQUEST_BUDGET_TIMEOUTS × UPSTREAM_TIMEOUT_MS from its start
 * (lib/upstream/budget.ts), and the lock is taken after that start; plus a
 * margin for the work in process. 35 s with the default 10 s, which is also
 * how long a holder that was killed keeps the order from other writers.
 */
export function orderLockTtlMs(upstreamTimeoutMs: number): number {
  return REQUEST_BUDGET_TIMEOUTS * upstreamTimeoutMs + LOCK_TTL_MARGIN_MS;
}

const FIRST_RETRY_MS = 20;
const MAX_RETRY_MS = 250;
const LATE_WARNING_INTERVAL_MS = 60_000;

type LateAnswer<T> = { kind: 'answered'; value: T } | { kind: 'no_answer' } | { kind: 'connection_failed' };

/** A pending Redis answer, awaited until `deadline` at most. */
async function settledBy<T>(answer: Promise<T>, deadline: number): Promise<LateAnswer<T>> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<LateAnswer<T>>((resolve) => {
    timer = setTimeout(() => resolve({ kind: 'no_answer' }), Math.max(0, deadline - Date.now()));
  });
  try {
    return await Promise.race([
      answer.then(
        (value): LateAnswer<T> => ({ kind: 'answered', value }),
        (): LateAnswer<T> => ({ kind: 'connection_failed' }),
      ),
      expired,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

export interface RedisOrderLocksOptions extends Partial<LockWait> {
  ttlMs: number;
  prefix?: string;
  /** How long a remembered event is kept (PROCESSED_EVENT_TTL_MS unless a test says otherwise). */
  eventTtlMs?: number;
}

export class RedisOrderLocks implements OrderLocks {
  private readonly prefix: string;
  private readonly ttlMs: number;
  private readonly eventTtlMs: number;
  private readonly wait: LockWait;
  private lastLateWarning = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly connection: RedisConnection,
    options: RedisOrderLocksOptions,
  ) {
    this.prefix = options.prefix ?? KEY_PREFIX;
    this.ttlMs = options.ttlMs;
    this.eventTtlMs = options.eventTtlMs ?? PROCESSED_EVENT_TTL_MS;
    this.wait = { waitMs: options.waitMs ?? DEFAULT_LOCK_WAIT.waitMs, reserveMs: options.reserveMs ?? DEFAULT_LOCK_WAIT.reserveMs };
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

  async withEventLock<T>(orderId: number, eventKey: string, task: () => Promise<EventTaskResult<T>>): Promise<EventLockResult<T>> {
    const token = randomUUID();
    if ((await this.acquire(orderId, token, eventKey)) === 'remembered') return { duplicate: true };
    let outcome: EventTaskResult<T>;
    try {
      outcome = await task();
    } catch (error) {
      await this.release(orderId, token);
      throw error;
    }
    if (!outcome.remember) {
      await this.release(orderId, token);
      return { duplicate: false, result: outcome.result };
    }
    // Remembered with the release, once its effects are written. Unlike a bare release this
    // one may fail the request (the provider retries, and finds the receipt on the order).
    await this.connection.run('lock_release', leaveCall(this.prefix, orderId, token, { eventKey, ttlMs: this.eventTtlMs }));
    return { duplicate: false, result: outcome.result };
  }

  /**
   * Takes the lock, or answers `remembered` when `eventKey` is remembered
   * (without the lock), or throws OrderBusyError when it stays held past the
   * wait (or when Redis leaves in doubt whether it is held), or
   * SharedStateUnavailableError when Redis failed before it could have applied
   * the script (not connected, the command refused at once), which is the only
   * failure a caller may fall back from. The first attempt carries the
   * request's pending rate-limit hit (RateLimitedError when it is over: no
   * lock taken); the retries lock (and check the event) only.
   *
   * Once an attempt has found the order held by another writer, a Redis
   * failure on a later attempt is answered as busy: that writer may still be
   * working on the order, and a fallback to this instance's memory would let
   * this one write beside it.
   */
  private async acquire(orderId: number, token: string, eventKey?: string, peek?: LockPeek): Promise<'locked' | 'remembered'> {
    const deadline = Date.now() + lockWaitMs(this.wait);
    let seenHeld = false;
    let hit = claimPendingRateLimit();
    for (let attempt = 0; ; attempt += 1) {
      let answer: EntryAnswer;
      try {
        answer = await this.enter(orderId, token, { eventKey, peekKey: peek?.key }, hit, deadline);
      } catch (error) {
        if (seenHeld && error instanceof SharedStateUnavailableError) {
          log.warn('redis.lock_lost_while_waiting', { orderId, error: error.kind });
          throw new OrderBusyError(orderId);
        }
        throw error;
      }
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
   * One ENTRY script (lib/redis/gate.ts): the hit counted, the event checked, the lock taken if free.
   *
   * A script that times out has reached Redis, which may still apply it: the
   * order may then be ours, or another instance's (taken before Redis slowed
   * down, and being written right now), and nothing here can tell which until
   * Redis answers. So it is not an outage to fall back from: falling back could
   * let this instance write beside that holder with no guard at all. Its own
   * late answer is awaited instead, as long as this writer may wait for a busy
   * order; a slow Redis then still serializes the writers, only later. A Redis
   * that stays silent that long (frozen, a network black hole), or whose
   * connection breaks with the command unanswered, leaves the lock in doubt:
   * the answer is busy (the caller retries, as for any held order), and a
   * release is queued behind the script on the same connection, so a lock it
   * applies late is taken back at once instead of blocking the order for the
   * TTL. (Should that connection break too, the TTL frees it.) A hit it carried
   * is then counted in this instance's memory, as when Redis is down.
   */
  private async enter(
    orderId: number,
    token: string,
    reads: { eventKey: string | undefined; peekKey: string | undefined },
    hit: ClaimedHit | undefined,
    deadline: number,
  ): Promise<EntryAnswer> {
    const { eventKey, peekKey } = reads;
    const call = entryCall(this.prefix, { hit, eventKey, lock: { orderId, token, ttlMs: this.ttlMs, peekKey } });
    let sent: Promise<EntryReply> | undefined;
    let reply: EntryReply;
    try {
      reply = await this.connection.run('lock_acquire', (redis) => (sent = call.send(redis)));
    } catch (error) {
      const timedOut = error instanceof SharedStateUnavailableError && error.details?.cause === 'TimeoutError';
      if (!timedOut || sent === undefined) return fallBackHit(hit, error);
      this.warnLateAnswer(orderId);
      const late = await settledBy(sent, deadline);
      if (late.kind !== 'answered') {
        void this.connection.run('lock_release', leaveCall(this.prefix, orderId, token)).catch(() => undefined);
        log.warn('redis.lock_in_doubt', { orderId, cause: late.kind });
        if (hit) await hit.fellBack();
        throw new OrderBusyError(orderId);
      }
      reply = late.value;
    }
    return call.read(reply);
  }

  /** At most one warning a minute that Redis answers locks later than REDIS_TIMEOUT_MS. */
  private warnLateAnswer(orderId: number): void {
    const now = Date.now();
    if (now - this.lastLateWarning < LATE_WARNING_INTERVAL_MS) return;
    this.lastLateWarning = now;
    log.warn('redis.lock_answer_late', {
      orderId,
      message: 'Redis did not answer a lock within REDIS_TIMEOUT_MS: waiting for its answer instead of falling back, so writers stay serialized',
    });
  }

  /** Never throws: a lock that cannot be released expires with its TTL. */
  private async release(orderId: number, token: string): Promise<void> {
    try {
      await this.connection.run('lock_release', leaveCall(this.prefix, orderId, token));
    } catch (error) {
      log.warn('redis.lock_release_failed', { orderId, error: error instanceof SharedStateUnavailableError ? error.kind : 'unexpected' });
    }
  }
}
