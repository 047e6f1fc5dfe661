/**
 * The shipping replay queue: shipping updates the store did not take (every
 * failure but an unknown order or a refused update, and a busy order), ShipStation
 * batches or the rest of one that were not read, and shipments the webhook had
 * no time for, kept until GET /api/cron/retry-shipping applies them. The
 * webhook still answers 200 (docs/contract.md#spec-4-4); this is how its update is not lost.
 *
 * An entry leaves the queue only when it was applied, when a replay reached a
 * final answer (the order was shipped meanwhile, it does not exist), or when it
 * is parked after MAX_REPLAY_ATTEMPTS failed attempts: parked entries are kept,
 * reported by every replay run and logged, never dropped.
 *
 * With REDIS_URL set the queue lives in Redis (lib/shared-state/shipping-replay/redis.ts:
 * bodies in a hash, waiting ids in a sorted set scored by `nextAttemptAt`, parked
 * entries in a second hash; `takeDue` one Lua script, so two overlapping runs on
 * different instances never take the same entry), with this in-process queue as
 * its last resort when Redis cannot take an entry (lib/shared-state/fallback.ts).
 */
import { randomUUID } from 'node:crypto';
import { log } from '@/lib/log';
import type { DeliveryNotice, ShipmentNotice } from '@/lib/shipment-notices';

/** The webhook's own failed attempt counts: the tenth failure parks the entry. */
export const MAX_REPLAY_ATTEMPTS = 10;

export type ReplayWork =
  /** One shipment, as the webhook had it (inline, or read from ShipStation). */
  | { kind: 'shipment'; notice: ShipmentNotice }
  /** A ShipStation batch, or the rest of one from the page its `resource_url` names, not read yet (a `*_V2` type: read from V2). */
  | { kind: 'resource'; resourceUrl: string; eventType: string }
  /** A V2 delivery not recorded yet; without an order number, its label's order is still to be looked up. */
  | { kind: 'delivery'; labelId: string | undefined; delivery: DeliveryNotice };

export interface ReplayEntry {
  id: string;
  work: ReplayWork;
  /** The order the shipment names, when known (for logs and the summary). */
  orderId: number | undefined;
  /** Failed attempts so far, the webhook's included. */
  attempts: number;
  /** The last failure, an identifier (`store:unavailable`, `store:rejected:429`, `shipstation:timeout`, `order_busy`, `no_time`). */
  lastFailure: string;
  firstQueuedAt: number;
  /** Not taken before this time (ms since the epoch). */
  nextAttemptAt: number;
}

export interface ShippingReplayQueue {
  add(entry: Omit<ReplayEntry, 'id'>): Promise<ReplayEntry>;
  /**
   * The entry due longest ago (nextAttemptAt <= now), leased: its nextAttemptAt moves to
   * now + leaseMs, so an overlapping run does not take it, and a run that dies leaves it
   * to be taken again after the lease.
   */
  takeDue(now: number, leaseMs: number): Promise<ReplayEntry | undefined>;
  /** Stores the entry as given (attempts, lastFailure, nextAttemptAt already updated). */
  retryLater(entry: ReplayEntry): Promise<void>;
  remove(id: string): Promise<void>;
  /** Moves the entry from the waiting entries to the parked ones. */
  park(entry: ReplayEntry): Promise<void>;
  parked(): Promise<ReplayEntry[]>;
  counts(): Promise<{ waiting: number; parked: number }>;
}

/**
 * When to try again after `attempts` failed attempts: the next cron run after the
 * first failure, then 5 minutes doubling up to 6 hours (about 23 hours from the
 * first failure to the tenth).
 */
export function nextAttemptDelayMs(attempts: number): number {
  if (attempts <= 1) return 0;
  return Math.min(5 * 60_000 * 2 ** (attempts - 2), 6 * 3_600_000);
}

/** Bounds memory while the store is down for long; past it an update is dropped loudly (error log). */
const MEMORY_CAPACITY = 10_000;

/** One process's queue: lost on restart (the start-up warns in production when REDIS_URL is unset). */
export class MemoryShippingReplayQueue implements ShippingReplayQueue {
  private readonly waiting = new Map<string, ReplayEntry>();
  private readonly parkedEntries = new Map<string, ReplayEntry>();

  async add(entry: Omit<ReplayEntry, 'id'>): Promise<ReplayEntry> {
    const stored = { ...structuredClone(entry), id: randomUUID() };
    if (this.waiting.size >= MEMORY_CAPACITY) {
      log.error('shipping.replay_dropped', { orderId: entry.orderId, reason: 'queue_full', capacity: MEMORY_CAPACITY });
      return stored;
    }
    this.waiting.set(stored.id, stored);
    return structuredClone(stored);
  }

  async takeDue(now: number, leaseMs: number): Promise<ReplayEntry | undefined> {
    let due: ReplayEntry | undefined;
    for (const entry of this.waiting.values()) {
      if (entry.nextAttemptAt <= now && (!due || entry.nextAttemptAt < due.nextAttemptAt)) due = entry;
    }
    if (!due) return undefined;
    due.nextAttemptAt = now + leaseMs;
    return structuredClone(due);
  }

  async retryLater(entry: ReplayEntry): Promise<void> {
    this.waiting.set(entry.id, structuredClone(entry));
  }

  async remove(id: string): Promise<void> {
    this.waiting.delete(id);
  }

  async park(entry: ReplayEntry): Promise<void> {
    this.waiting.delete(entry.id);
    this.parkedEntries.set(entry.id, structuredClone(entry));
  }

  async parked(): Promise<ReplayEntry[]> {
    return [...this.parkedEntries.values()].map((entry) => structuredClone(entry));
  }

  async counts(): Promise<{ waiting: number; parked: number }> {
    return { waiting: this.waiting.size, parked: this.parkedEntries.size };
  }

  /** Whether this queue holds the entry, waiting (taken or not). */
  holds(id: string): boolean {
    return this.waiting.has(id);
  }

  /** The waiting entries, for handing them over to the shared queue once Redis answers again (lib/shared-state/fallback.ts). */
  waitingEntries(): ReplayEntry[] {
    return [...this.waiting.values()].map((entry) => structuredClone(entry));
  }
}

/** Queues work whose first attempt (the webhook's) just failed; the next cron run takes it. */
export async function queueForReplay(
  queue: ShippingReplayQueue,
  work: ReplayWork,
  failure: { orderId: number | undefined; reason: string },
  now = Date.now(),
): Promise<void> {
  const entry = await queue.add({
    work,
    orderId: failure.orderId,
    attempts: 1,
    lastFailure: failure.reason,
    firstQueuedAt: now,
    nextAttemptAt: now + nextAttemptDelayMs(1),
  });
  log.warn('shipping.replay_queued', { entryId: entry.id, kind: work.kind, orderId: failure.orderId, failure: failure.reason });
}
