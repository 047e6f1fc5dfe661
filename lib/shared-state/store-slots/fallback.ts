import { eitherOf, type FallbackWarning } from '@/lib/shared-state/fallback';
import type { SlotLease, SlotRequest, SlotUsage, StoreSlots } from '@/lib/shared-state/store-slots/store-slots';

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
