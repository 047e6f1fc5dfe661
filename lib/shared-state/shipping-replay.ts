/**
 * Shipping updates the store did not take, batches not read yet, shipments the webhook had no time for: kept until
 * GET /api/cron/retry-shipping applies them (docs/contract.md#spec-4-4). An entry leaves when applied or settled;
 * after MAX_REPLAY_ATTEMPTS it is parked, kept and reported, never dropped.
 */
import { randomUUID } from 'node:crypto';
import { log } from '@/lib/log';
import { KEY_PREFIX, RedisScript, type RedisConnection } from '@/lib/redis/connection';
import { unlessUnavailable } from '@/lib/shared-state/fallback';
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
  /** The last failure, an identifier: `store:unavailable`, `store:rejected:429`, `shipstation:timeout`, `order_busy`, `no_time`. */
  lastFailure: string;
  firstQueuedAt: number;
  /** Not taken before this time (ms since the epoch). */
  nextAttemptAt: number;
}

export interface ShippingReplayQueue {
  add(entry: Omit<ReplayEntry, 'id'>): Promise<ReplayEntry>;
  /** The entry due longest ago, leased: its nextAttemptAt moves to now + leaseMs (an overlapping run does not take it). */
  takeDue(now: number, leaseMs: number): Promise<ReplayEntry | undefined>;
  /** Stores the entry as given (attempts, lastFailure, nextAttemptAt already updated). */
  retryLater(entry: ReplayEntry): Promise<void>;
  remove(id: string): Promise<void>;
  park(entry: ReplayEntry): Promise<void>;
  parked(): Promise<ReplayEntry[]>;
  counts(): Promise<{ waiting: number; parked: number }>;
}

/** After `attempts` failures: the next cron run after the first, then 5 minutes doubling up to 6 hours (23 hours in all). */
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

  /** The waiting entries, handed over to the shared queue once Redis answers again. */
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

/** The waiting entry due longest ago, leased by moving its score to now + lease; an id without a body is dropped. */
const TAKE_DUE = new RedisScript(`
while true do
  local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, 1)
  if #ids == 0 then return false end
  local body = redis.call('HGET', KEYS[2], ids[1])
  if body then
    redis.call('ZADD', KEYS[1], ARGV[2], ids[1])
    return body
  end
  redis.call('ZREM', KEYS[1], ids[1])
end
`);

const parsed = (body: string) => JSON.parse(body) as ReplayEntry;

/**
 * Durable and shared: entries by id, waiting ids scored by `nextAttemptAt`, parked entries, under one hash tag (one
 * Cluster slot). One round trip each: `takeDue` a script (two instances never take the same entry), the rest a MULTI.
 */
export class RedisShippingReplayQueue implements ShippingReplayQueue {
  private readonly keys: { entries: string; due: string; parked: string };

  constructor(
    private readonly connection: RedisConnection,
    options: { prefix?: string } = {},
  ) {
    const base = `${options.prefix ?? KEY_PREFIX}{shipping-replay}:`;
    this.keys = { entries: `${base}entries`, due: `${base}due`, parked: `${base}parked` };
  }

  async add(entry: Omit<ReplayEntry, 'id'>): Promise<ReplayEntry> {
    const added: ReplayEntry = { ...entry, id: randomUUID() };
    await this.write('replay_add', added);
    return added;
  }

  async takeDue(now: number, leaseMs: number): Promise<ReplayEntry | undefined> {
    const leasedUntil = now + leaseMs;
    const body = await this.connection.run('replay_take_due', (redis) =>
      TAKE_DUE.run(redis, [this.keys.due, this.keys.entries], [String(now), String(leasedUntil)]),
    );
    if (typeof body !== 'string') return undefined;
    // The score is the truth about when it may be taken again; the body is as last written.
    return { ...parsed(body), nextAttemptAt: leasedUntil };
  }

  async retryLater(entry: ReplayEntry): Promise<void> {
    await this.write('replay_retry_later', entry);
  }

  async remove(id: string): Promise<void> {
    await this.connection.run('replay_remove', (redis) => redis.multi().zRem(this.keys.due, id).hDel(this.keys.entries, id).exec());
  }

  async park(entry: ReplayEntry): Promise<void> {
    await this.connection.run('replay_park', (redis) =>
      redis
        .multi()
        .zRem(this.keys.due, entry.id)
        .hDel(this.keys.entries, entry.id)
        .hSet(this.keys.parked, entry.id, JSON.stringify(entry))
        .exec(),
    );
  }

  async parked(): Promise<ReplayEntry[]> {
    const bodies = await this.connection.run('replay_parked', (redis) => redis.hVals(this.keys.parked));
    // A hash has no order: oldest first, as they were queued.
    return bodies.map(parsed).sort((a, b) => a.firstQueuedAt - b.firstQueuedAt || a.id.localeCompare(b.id));
  }

  async counts(): Promise<{ waiting: number; parked: number }> {
    const [waiting, parked] = await this.connection.run('replay_counts', (redis) =>
      redis.multi().zCard(this.keys.due).hLen(this.keys.parked).exec(),
    );
    return { waiting: Number(waiting), parked: Number(parked) };
  }

  private async write(operation: string, entry: ReplayEntry): Promise<void> {
    await this.connection.run(operation, (redis) =>
      redis
        .multi()
        .hSet(this.keys.entries, entry.id, JSON.stringify(entry))
        .zAdd(this.keys.due, { score: entry.nextAttemptAt, value: entry.id })
        .exec(),
    );
  }
}

/**
 * The queue in Redis, this instance's memory its last resort: an entry Redis cannot take is kept here (error log) until
 * a run or an update finds Redis answering. Reads of the shared queue never fall back: a run whose Redis fails fails.
 */
export function shippingReplayWithFallback(shared: ShippingReplayQueue, local: MemoryShippingReplayQueue): ShippingReplayQueue {
  /** Moves the entries kept in memory during an outage into Redis, as they are (id, attempts, due time). */
  const handOver = async (): Promise<void> => {
    for (const entry of local.waitingEntries()) {
      const moved = await unlessUnavailable(
        () => shared.retryLater(entry).then(() => true),
        () => false,
      );
      if (!moved) return;
      await local.remove(entry.id);
      log.warn('shipping.replay_handed_over', { entryId: entry.id, orderId: entry.orderId ?? null });
    }
  };
  /** An entry taken from memory goes back there; any other is Redis'. */
  const queueOf = (id: string) => (local.holds(id) ? local : shared);
  return {
    add: (entry) => {
      const addShared = async () => {
        const added = await shared.add(entry);
        await handOver();
        return added;
      };
      return unlessUnavailable(addShared, (failure) => {
        // The order id only: the entry's work holds a tracking number and a ShipStation URL.
        log.error('shipping.replay_kept_in_memory', {
          orderId: entry.orderId ?? null,
          kind: entry.work.kind,
          operation: failure.details?.operation ?? null,
          cause: failure.details?.cause,
          message: 'Redis is unavailable: this shipping update waits in this instance\'s memory until Redis answers again',
        });
        return local.add(entry);
      });
    },
    takeDue: async (now, leaseMs) => {
      await handOver();
      return (await local.takeDue(now, leaseMs)) ?? shared.takeDue(now, leaseMs);
    },
    retryLater: (entry) => queueOf(entry.id).retryLater(entry),
    remove: (id) => queueOf(id).remove(id),
    park: (entry) => queueOf(entry.id).park(entry),
    parked: async () => [...(await shared.parked()), ...(await local.parked())],
    counts: async () => {
      const [inRedis, inMemory] = [await shared.counts(), await local.counts()];
      return { waiting: inRedis.waiting + inMemory.waiting, parked: inRedis.parked + inMemory.parked };
    },
  };
}
