/**
 * Per-order locks shared by every instance (DECISIONS 12), so a double-click
 * that lands on two instances, or one event delivered to two, still runs one
 * read-modify-write at a time.
 *
 * Taken with `SET key token NX PX ttl` (one round trip), released by a script
 * that deletes the key only while it still holds this holder's token (one round
 * trip), so a holder whose lock expired can never release its successor's.
 * A waiter retries with a short, jittered, growing pause until its wait is
 * over (lib/security/order-lock.ts, `lockWaitMs`: never past its request's
 * deadline), then gives up with OrderBusyError.
 *
 * The TTL frees the order when a holder dies. A holder that outlives it lets
 * the next writer in early; that writer does no harm because every writer
 * re-reads the order after taking the lock and checks its status (payable,
 * paid, shippable) and the card webhook checks the processed events there too.
 */
import { randomInt, randomUUID } from 'node:crypto';
import { OrderBusyError } from '@/lib/errors';
import { log } from '@/lib/log';
import { KEY_PREFIX, RedisScript, SharedStateUnavailableError, type RedisConnection } from '@/lib/redis/connection';
import { DEFAULT_LOCK_WAIT, lockWaitMs, type LockWait, type OrderLocks } from '@/lib/security/order-lock';
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

type LateAnswer = { kind: 'answered'; taken: boolean } | { kind: 'no_answer' } | { kind: 'connection_failed' };

/** A pending Redis answer, awaited until `deadline` at most. */
async function settledBy(answer: Promise<boolean>, deadline: number): Promise<LateAnswer> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<LateAnswer>((resolve) => {
    timer = setTimeout(() => resolve({ kind: 'no_answer' }), Math.max(0, deadline - Date.now()));
  });
  try {
    return await Promise.race([
      answer.then(
        (taken): LateAnswer => ({ kind: 'answered', taken }),
        (): LateAnswer => ({ kind: 'connection_failed' }),
      ),
      expired,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

const RELEASE_IF_OWNER = new RedisScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`);

export interface RedisOrderLocksOptions extends Partial<LockWait> {
  ttlMs: number;
  prefix?: string;
}

export class RedisOrderLocks implements OrderLocks {
  private readonly prefix: string;
  private readonly ttlMs: number;
  private readonly wait: LockWait;
  private lastLateWarning = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly connection: RedisConnection,
    options: RedisOrderLocksOptions,
  ) {
    this.prefix = `${options.prefix ?? KEY_PREFIX}lock:order:`;
    this.ttlMs = options.ttlMs;
    this.wait = { waitMs: options.waitMs ?? DEFAULT_LOCK_WAIT.waitMs, reserveMs: options.reserveMs ?? DEFAULT_LOCK_WAIT.reserveMs };
  }

  async withOrderLock<T>(orderId: number, task: () => Promise<T>): Promise<T> {
    const key = `${this.prefix}${orderId}`;
    const token = randomUUID();
    await this.acquire(orderId, key, token);
    try {
      return await task();
    } finally {
      await this.release(orderId, key, token);
    }
  }

  /**
   * Takes the lock, or throws OrderBusyError when it stays held past the wait
   * (or when Redis leaves in doubt whether it is held), or
   * SharedStateUnavailableError when Redis failed before it could have applied
   * a `SET` (not connected, the command refused at once), which is the only
   * failure a caller may fall back from.
   *
   * Once a `SET NX` has found the order held by another writer, a Redis
   * failure on a later attempt is answered as busy: that writer may still be
   * working on the order, and a fallback to this instance's memory would let
   * this one write beside it.
   */
  private async acquire(orderId: number, key: string, token: string): Promise<void> {
    const deadline = Date.now() + lockWaitMs(this.wait);
    let seenHeld = false;
    for (let attempt = 0; ; attempt += 1) {
      let taken: boolean;
      try {
        taken = await this.setIfFree(orderId, key, token, deadline);
      } catch (error) {
        if (seenHeld && error instanceof SharedStateUnavailableError) {
          log.warn('redis.lock_lost_while_waiting', { orderId, error: error.kind });
          throw new OrderBusyError(orderId);
        }
        throw error;
      }
      if (taken) return;
      seenHeld = true;
      const pause = Math.min(FIRST_RETRY_MS * 2 ** attempt, MAX_RETRY_MS);
      if (Date.now() + pause > deadline) throw new OrderBusyError(orderId);
      await new Promise((resolve) => setTimeout(resolve, pause / 2 + randomInt(0, Math.ceil(pause / 2) + 1)));
    }
  }

  /**
   * One `SET NX PX`: true when the lock is now ours, false when another holds it.
   *
   * A `SET` that times out has reached Redis, which may still apply it: the
   * order may then be ours, or another instance's (taken before Redis slowed
   * down, and being written right now), and nothing here can tell which until
   * Redis answers. So it is not an outage to fall back from: falling back could
   * let this instance write beside that holder with no guard at all. Its own
   * late answer is awaited instead, as long as this writer may wait for a busy
   * order; a slow Redis then still serializes the writers, only later. A Redis
   * that stays silent that long (frozen, a network black hole), or whose
   * connection breaks with the command unanswered, leaves the lock in doubt:
   * the answer is busy (the caller retries, as for any held order), and a
   * release is queued behind the `SET` on the same connection, so a lock it
   * applies late is taken back at once instead of blocking the order for the
   * TTL. (Should that connection break too, the TTL frees it.)
   */
  private async setIfFree(orderId: number, key: string, token: string, deadline: number): Promise<boolean> {
    let answer: Promise<boolean> | undefined;
    try {
      return await this.connection.run('lock_acquire', (redis) => {
        answer = redis.set(key, token, { condition: 'NX', expiration: { type: 'PX', value: this.ttlMs } }).then((reply) => reply === 'OK');
        return answer;
      });
    } catch (error) {
      const timedOut = error instanceof SharedStateUnavailableError && error.details?.cause === 'TimeoutError';
      if (!timedOut || answer === undefined) throw error;
      this.warnLateAnswer(orderId);
      const late = await settledBy(answer, deadline);
      if (late.kind === 'answered') return late.taken;
      void this.connection.run('lock_release', (redis) => RELEASE_IF_OWNER.run(redis, [key], [token])).catch(() => undefined);
      log.warn('redis.lock_in_doubt', { orderId, cause: late.kind });
      throw new OrderBusyError(orderId);
    }
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
  private async release(orderId: number, key: string, token: string): Promise<void> {
    try {
      await this.connection.run('lock_release', (redis) => RELEASE_IF_OWNER.run(redis, [key], [token]));
    } catch (error) {
      log.warn('redis.lock_release_failed', { orderId, error: error instanceof SharedStateUnavailableError ? error.kind : 'unexpected' });
    }
  }
}
