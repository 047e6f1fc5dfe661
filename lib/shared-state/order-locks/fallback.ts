import { SharedStateUnavailableError } from '@/lib/errors';
import type { FallbackWarning } from '@/lib/shared-state/fallback';
import type { EventLockResult, EventTaskResult, LockPeek, OrderLocks } from '@/lib/shared-state/order-locks/order-locks';

/**
 * The checkout and shipping writers' locks: this instance's lock first, then
 * the shared one. This instance's lock is taken always, whatever Redis does,
 * so its writers (checkout, card webhook, shipping webhook, cron units) never
 * overlap even while some of them fall back and others fail.
 *
 * Falls back (runs with this instance's lock alone) only when Redis failed
 * before it could have applied a `SET`: not connected (refused, down, still
 * reconnecting), or the command refused at once. Then no instance holds a lock
 * in Redis that this one could be writing beside, bar one taken just before
 * the outage, and checkout keeps working through the outage. Every other
 * doubt is answered busy by RedisOrderLocks (OrderBusyError), never by a
 * fallback: a failure after a `SET NX` found the order held (that holder may
 * still be writing), and a `SET` that timed out, whose late answer is awaited
 * instead (Redis may have applied it, or another instance may hold the order;
 * a Redis that stays silent for the whole wait answers busy).
 */
export class OrderLocksWithFallback implements OrderLocks {
  constructor(
    private readonly shared: OrderLocks,
    private readonly local: OrderLocks,
    private readonly warning: FallbackWarning,
  ) {}

  withOrderLock<T>(orderId: number, task: () => Promise<T>, peek?: LockPeek): Promise<T> {
    return this.local.withOrderLock(orderId, () => this.sharedOrAlone(orderId, task, peek));
  }

  private async sharedOrAlone<T>(orderId: number, task: () => Promise<T>, peek: LockPeek | undefined): Promise<T> {
    let started = false;
    const once = () => {
      started = true;
      return task();
    };
    try {
      return await this.shared.withOrderLock(orderId, once, peek);
    } catch (error) {
      // Only a lock that could not be taken falls back; a task that ran is never run twice.
      if (started || !(error instanceof SharedStateUnavailableError)) throw error;
      this.warning.note('order_locks', error);
      return task();
    }
  }
}

/**
 * The card webhook's locks: this instance's lock, then the shared one, and no
 * fallback: when Redis fails, the delivery fails (400) and Stripe retries it.
 * This instance's lock still serializes it with this instance's checkout
 * writers, which may be running on their fallback.
 */
export class OrderLocksWithoutFallback implements OrderLocks {
  constructor(
    private readonly shared: OrderLocks,
    private readonly local: OrderLocks,
  ) {}

  withOrderLock<T>(orderId: number, task: () => Promise<T>, peek?: LockPeek): Promise<T> {
    return this.local.withOrderLock(orderId, () => this.shared.withOrderLock(orderId, task, peek));
  }

  withEventLock<T>(orderId: number, eventKey: string, task: () => Promise<EventTaskResult<T>>): Promise<EventLockResult<T>> {
    const sharedEventLock = this.shared.withEventLock?.bind(this.shared);
    if (!sharedEventLock) throw new Error('the shared locks keep no events');
    return this.local.withOrderLock(orderId, () => sharedEventLock(orderId, eventKey, task));
  }
}
