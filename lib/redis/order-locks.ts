/**
 * Per-order locks shared by every instance (DECISIONS 12), so a double-click
 * that lands on two instances, or one event delivered to two, still runs one
 * read-modify-write at a time.
 *
 * Taken with `SET key token NX PX ttl` (one round trip), released by a script
 * that deletes the key only while it still holds this holder's token (one round
 * trip), so a holder whose lock expired can never release its successor's.
 * A waiter retries with a short, jittered, growing pause until its wait is
 * over, then gives up with OrderBusyError.
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
import type { OrderLocks } from '@/lib/security/order-lock';

/**
 * Upstream attempts of the longest critical section, payment-intent replacing
 * a canceled intent: get order (store, 1 attempt), retrieve intent, create
 * intent (Stripe, 2 attempts each: the SDK retries once), update order (store,
 * 1), update the intent's amount (Stripe, 2) = 8. The card webhook needs 3
 * (get order, update order, clear the cart) and the shipping webhook 3 (get
 * order, `shipped` refused, `completed`).
 */
export const LONGEST_LOCKED_FLOW_UPSTREAM_ATTEMPTS = 8;
/** Stripe's pause between its two attempts and the service's own work between calls. */
const LOCK_TTL_MARGIN_MS = 5_000;

/** A lock lives as long as the longest critical section can take: every attempt at UPSTREAM_TIMEOUT_MS, plus a margin. */
export function orderLockTtlMs(upstreamTimeoutMs: number): number {
  return upstreamTimeoutMs * LONGEST_LOCKED_FLOW_UPSTREAM_ATTEMPTS + LOCK_TTL_MARGIN_MS;
}

/** How long a writer waits for a busy order, as MemoryOrderLocks does. */
export const ORDER_LOCK_WAIT_MS = 30_000;
const FIRST_RETRY_MS = 20;
const MAX_RETRY_MS = 250;

const RELEASE_IF_OWNER = new RedisScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`);

export interface RedisOrderLocksOptions {
  ttlMs: number;
  waitMs?: number;
  prefix?: string;
}

export class RedisOrderLocks implements OrderLocks {
  private readonly prefix: string;
  private readonly ttlMs: number;
  private readonly waitMs: number;

  constructor(
    private readonly connection: RedisConnection,
    options: RedisOrderLocksOptions,
  ) {
    this.prefix = `${options.prefix ?? KEY_PREFIX}lock:order:`;
    this.ttlMs = options.ttlMs;
    this.waitMs = options.waitMs ?? ORDER_LOCK_WAIT_MS;
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

  private async acquire(orderId: number, key: string, token: string): Promise<void> {
    const deadline = Date.now() + this.waitMs;
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
        throw error;
      }
      if (taken) return;
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
