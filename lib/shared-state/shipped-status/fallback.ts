/** Whether the store lacks `shipped`, remembered in this instance's memory while Redis fails. */
import { eitherOf, type FallbackWarning } from '@/lib/shared-state/fallback';
import type { ShippedStatusMemory, ShippedStatusReading } from '@/lib/shared-state/shipped-status/shipped-status';

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
