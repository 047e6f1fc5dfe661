/** ShipStation's rate budget, counted in this instance's memory while Redis fails. */
import { eitherOf, type FallbackWarning } from '@/lib/shared-state/fallback';
import type { ShipStationRateBudget } from '@/lib/shared-state/shipstation-budget/rate-budget';

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
