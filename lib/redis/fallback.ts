/**
 * What the service does when Redis fails (docs/operations.md, "When Redis is down"):
 * these wrappers put a shared implementation in front of an in-process one
 * and use the in-process one whenever the shared one answers
 * SharedStateUnavailableError, logging a warning at most once a minute.
 * lib/services.ts decides which state may fall back (rate limits, checkout
 * and shipping locks, the shipping memories, the shipping replay queue's
 * writes, the reconciliation cursor) and which may not (the card webhook's
 * locks and processed events: Stripe retries instead; the replay cron's reads
 * of the queue: the run fails rather than report an empty queue).
 */
import type { ReconcileCursor, ReconcileCursorStore } from '@/lib/cron/reconcile-cursor';
import { SharedStateUnavailableError, type SafeDetails } from '@/lib/errors';
import { log } from '@/lib/log';
import type { EventLockResult, EventTaskResult, LockPeek, OrderLocks } from '@/lib/security/order-lock';
import { PendingRateLimitHit } from '@/lib/security/pending-rate-limit';
import type { RateLimitDecision, RateLimiter, RateLimitRule } from '@/lib/security/rate-limit';
import type { ShipStationRateBudget } from '@/lib/shipping/rate-budget';
import type { ShippedStatusMemory, ShippedStatusReading } from '@/lib/store/shipped-status';
import type { SlotLease, SlotRequest, SlotUsage, StoreSlots } from '@/lib/store/slots';
import type { MemoryShippingReplayQueue, ReplayEntry, ShippingReplayQueue } from '@/lib/webhooks/shipping/replay-queue';

const WARNING_INTERVAL_MS = 60_000;

/** One warning a minute at most, whatever part fell back and however many requests did. */
export class FallbackWarning {
  private last = Number.NEGATIVE_INFINITY;

  constructor(private readonly now: () => number = Date.now) {}

  note(part: string, error: SharedStateUnavailableError): void {
    const now = this.now();
    if (now - this.last < WARNING_INTERVAL_MS) return;
    this.last = now;
    log.warn('redis.fallback_to_memory', {
      part,
      operation: error.details?.operation ?? null,
      cause: error.details?.cause ?? null,
      message: 'Redis is unavailable: this instance keeps this state in its own memory until Redis answers again',
    });
  }
}

async function eitherOf<T>(
  part: string,
  warning: FallbackWarning,
  shared: () => Promise<T>,
  local: () => Promise<T>,
): Promise<T> {
  try {
    return await shared();
  } catch (error) {
    if (!(error instanceof SharedStateUnavailableError)) throw error;
    warning.note(part, error);
    return local();
  }
}

export class RateLimiterWithFallback implements RateLimiter {
  constructor(
    private readonly shared: RateLimiter,
    private readonly local: RateLimiter,
    private readonly warning: FallbackWarning,
  ) {}

  hit(rule: RateLimitRule, client: string): Promise<RateLimitDecision> {
    return eitherOf('rate_limiter', this.warning, () => this.shared.hit(rule, client), () => this.local.hit(rule, client));
  }

  /** A script that carries the hit and fails counts it here, as `hit` would have on the same failure. */
  defer(rule: RateLimitRule, client: string): PendingRateLimitHit {
    return new PendingRateLimitHit(rule, client, {
      alone: () => this.hit(rule, client),
      locally: () => this.local.hit(rule, client),
    });
  }
}

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

export class ShippedStatusWithFallback implements ShippedStatusMemory {
  constructor(
    private readonly shared: ShippedStatusMemory,
    private readonly local: ShippedStatusMemory,
    private readonly warning: FallbackWarning,
  ) {}

  statusToWrite(): Promise<string> {
    return eitherOf('shipped_status', this.warning, () => this.shared.statusToWrite(), () => this.local.statusToWrite());
  }

  reading(): ShippedStatusReading {
    const shared = this.shared.reading();
    return {
      ...(shared.peek ? { peek: shared.peek } : {}),
      statusToWrite: () => eitherOf('shipped_status', this.warning, () => shared.statusToWrite(), () => this.local.statusToWrite()),
    };
  }

  async rememberShippedMissing(): Promise<void> {
    await this.local.rememberShippedMissing();
    await eitherOf('shipped_status', this.warning, () => this.shared.rememberShippedMissing(), async () => undefined);
  }
}

export class ShipStationBudgetWithFallback implements ShipStationRateBudget {
  constructor(
    private readonly shared: ShipStationRateBudget,
    private readonly local: ShipStationRateBudget,
    private readonly warning: FallbackWarning,
  ) {}

  reserve(): Promise<number> {
    return eitherOf('shipstation_budget', this.warning, () => this.shared.reserve(), () => this.local.reserve());
  }

  observe(headers: Headers): Promise<void> {
    return eitherOf('shipstation_budget', this.warning, () => this.shared.observe(headers), () => this.local.observe(headers));
  }

  throttled(headers: Headers): Promise<void> {
    return eitherOf('shipstation_budget', this.warning, () => this.shared.throttled(headers), () => this.local.throttled(headers));
  }
}

/**
 * The store's slots in Redis, with this instance's own semaphore (the same
 * limit and split) while Redis is down. Not "no cap": a store shielded per
 * instance is still shielded from any one instance's burst, and a deployment
 * of a single long-running server keeps its cap exactly. Not a smaller share
 * either: the number of live instances is unknown, and a share too small for
 * the one instance taking the traffic would refuse checkouts the store could
 * serve. Leases taken here are given back here; those held in Redis when it
 * went away end by themselves.
 */
export class StoreSlotsWithFallback implements StoreSlots {
  constructor(
    private readonly shared: StoreSlots,
    private readonly local: StoreSlots,
    private readonly warning: FallbackWarning,
  ) {}

  tryAcquire(request: SlotRequest): Promise<SlotLease | undefined> {
    return eitherOf('store_slots', this.warning, () => this.shared.tryAcquire(request), () => this.local.tryAcquire(request));
  }

  async stopWaiting(token: string): Promise<void> {
    await this.local.stopWaiting(token);
    await eitherOf('store_slots', this.warning, () => this.shared.stopWaiting(token), async () => undefined);
  }

  usage(): Promise<SlotUsage> {
    return eitherOf('store_slots', this.warning, () => this.shared.usage(), () => this.local.usage());
  }
}

function unavailable(error: unknown): SharedStateUnavailableError | undefined {
  return error instanceof SharedStateUnavailableError ? error : undefined;
}

/**
 * The replay queue in Redis, with this instance's memory as the last resort:
 * an update the store refused must never be lost, so when Redis cannot take
 * it the entry is kept here (logged at error level: it is now only as durable
 * as this process), replayed by this instance's cron runs, and handed over to
 * Redis at the first run or the first queued update that finds Redis
 * answering again on this instance (the cron may land on another instance for
 * a while: a webhook that reaches this one moves them too). Reading the shared
 * queue is not replaced: a cron run whose Redis fails fails (5xx), it does not
 * report an empty queue.
 */
export class ShippingReplayQueueWithFallback implements ShippingReplayQueue {
  constructor(
    private readonly shared: ShippingReplayQueue,
    private readonly local: MemoryShippingReplayQueue,
  ) {}

  async add(entry: Omit<ReplayEntry, 'id'>): Promise<ReplayEntry> {
    let added: ReplayEntry;
    try {
      added = await this.shared.add(entry);
    } catch (error) {
      const failure = unavailable(error);
      if (!failure) throw error;
      // The order id only: the entry's work holds a tracking number and a ShipStation URL.
      log.error('shipping.replay_kept_in_memory', {
        orderId: entry.orderId ?? null,
        kind: entry.work.kind,
        operation: failure.details?.operation ?? null,
        cause: failure.details?.cause ?? null,
        message: 'Redis is unavailable: this shipping update waits in this instance\'s memory until Redis answers again',
      });
      return this.local.add(entry);
    }
    await this.handOver();
    return added;
  }

  async takeDue(now: number, leaseMs: number): Promise<ReplayEntry | undefined> {
    await this.handOver();
    return (await this.local.takeDue(now, leaseMs)) ?? this.shared.takeDue(now, leaseMs);
  }

  retryLater(entry: ReplayEntry): Promise<void> {
    return this.local.holds(entry.id) ? this.local.retryLater(entry) : this.shared.retryLater(entry);
  }

  remove(id: string): Promise<void> {
    return this.local.holds(id) ? this.local.remove(id) : this.shared.remove(id);
  }

  park(entry: ReplayEntry): Promise<void> {
    return this.local.holds(entry.id) ? this.local.park(entry) : this.shared.park(entry);
  }

  async parked(): Promise<ReplayEntry[]> {
    return [...(await this.shared.parked()), ...(await this.local.parked())];
  }

  async counts(): Promise<{ waiting: number; parked: number }> {
    const [shared, local] = [await this.shared.counts(), await this.local.counts()];
    return { waiting: shared.waiting + local.waiting, parked: shared.parked + local.parked };
  }

  /** Moves the entries kept in memory during an outage into Redis, as they are (id, attempts, due time). */
  private async handOver(): Promise<void> {
    for (const entry of this.local.waitingEntries()) {
      try {
        await this.shared.retryLater(entry);
      } catch (error) {
        if (unavailable(error)) return;
        throw error;
      }
      await this.local.remove(entry.id);
      log.warn('shipping.replay_handed_over', { entryId: entry.id, orderId: entry.orderId ?? null });
    }
  }
}

/** Where a cron run resumes: a reconciliation cursor, read, saved with a lifetime, and cleared. */
export interface CursorStore<Cursor> {
  load(): Promise<Cursor | undefined>;
  save(cursor: Cursor, ttlMs: number): Promise<void>;
  clear(): Promise<void>;
}

/** How one run names its cursor in the logs, and what of a cursor a failed save reports. */
export interface CursorLogging<Cursor> {
  /** The log events' prefix: `<prefix>.cursor_unreadable`, `_not_saved`, `_not_cleared`. */
  prefix: string;
  /** What an unreadable cursor costs the run (the `message` of the unreadable line). */
  unreadable: string;
  /** Identifiers of the cursor that could not be saved. */
  position(cursor: Cursor): SafeDetails;
}

/**
 * A cron run's cursor in Redis; when Redis fails the cursor is only an
 * optimisation: an unreadable one means a new pass (safe: applying an event or
 * a shipment twice changes nothing, the receipts and the status gate see to
 * it), an unsaved one is logged and costs the next run that same pass, an
 * uncleared one the rest of an old pass before a new one.
 */
export class CursorWithFallback<Cursor> implements CursorStore<Cursor> {
  constructor(
    private readonly shared: CursorStore<Cursor>,
    private readonly logging: CursorLogging<Cursor>,
  ) {}

  async load(): Promise<Cursor | undefined> {
    try {
      return await this.shared.load();
    } catch (error) {
      const failure = unavailable(error);
      if (!failure) throw error;
      log.warn(`${this.logging.prefix}.cursor_unreadable`, { cause: failure.details?.cause ?? null, message: this.logging.unreadable });
      return undefined;
    }
  }

  async save(cursor: Cursor, ttlMs: number): Promise<void> {
    try {
      await this.shared.save(cursor, ttlMs);
    } catch (error) {
      const failure = unavailable(error);
      if (!failure) throw error;
      log.error(`${this.logging.prefix}.cursor_not_saved`, { cause: failure.details?.cause ?? null, ...this.logging.position(cursor) });
    }
  }

  async clear(): Promise<void> {
    try {
      await this.shared.clear();
    } catch (error) {
      const failure = unavailable(error);
      if (!failure) throw error;
      log.warn(`${this.logging.prefix}.cursor_not_cleared`, { cause: failure.details?.cause ?? null });
    }
  }
}

/** Payment reconciliation's cursor: unreadable, the run starts from the newest event of the window. */
export function reconcileCursorWithFallback(shared: ReconcileCursorStore): CursorWithFallback<ReconcileCursor> {
  return new CursorWithFallback(shared, {
    prefix: 'reconcile',
    unreadable: 'starting from the newest event of the window',
    position: (cursor) => ({ resumeAfter: cursor.startingAfter }),
  });
}
