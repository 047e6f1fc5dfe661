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
   * Takes the lock, or throws OrderBusyError when it stays held past the wait,
   * or SharedStateUnavailableError when Redis fails before any answer said the
   * order was held, which is the only failure a caller may fall back from.
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
        taken = await this.connection.run('lock_acquire', async (redis) =>
          (await redis.set(key, token, { condition: 'NX', expiration: { type: 'PX', value: this.ttlMs } })) === 'OK',
        );
      } catch (error) {
        // A SET that timed out may still be applied once Redis answers: take back what might
        // be ours (queued behind it on the same connection), so the order is not left locked
        // for a whole TTL. Quietly: the caller reports the outage.
        if (error instanceof SharedStateUnavailableError && error.details?.cause === 'TimeoutError') {
          void this.connection.run('lock_release', (redis) => RELEASE_IF_OWNER.run(redis, [key], [token])).catch(() => undefined);
        }
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

  /** Never throws: a lock that cannot be released expires with its TTL. */
  private async release(orderId: number, key: string, token: string): Promise<void> {
    try {
      await this.connection.run('lock_release', (redis) => RELEASE_IF_OWNER.run(redis, [key], [token]));
    } catch (error) {
      log.warn('redis.lock_release_failed', { orderId, error: error instanceof SharedStateUnavailableError ? error.kind : 'unexpected' });
    }
  }
}
