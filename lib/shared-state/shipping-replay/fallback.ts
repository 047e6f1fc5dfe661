import { log } from '@/lib/log';
import { unavailable } from '@/lib/shared-state/fallback';
import type { MemoryShippingReplayQueue, ReplayEntry, ShippingReplayQueue } from '@/lib/shared-state/shipping-replay/replay-queue';

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
        cause: failure.details?.cause,
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
