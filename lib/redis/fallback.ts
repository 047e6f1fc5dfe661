/**
 * What the service does when Redis fails (README, "When Redis is down"):
 * these wrappers put a shared implementation in front of an in-process one
 * and use the in-process one whenever the shared one answers
 * SharedStateUnavailableError, logging a warning at most once a minute.
 * lib/services.ts decides which state may fall back (rate limits, checkout
 * and shipping locks, the shipping memories) and which may not (the card
 * webhook's locks and processed events: Stripe retries instead).
 */
import { log } from '@/lib/log';
import { SharedStateUnavailableError } from '@/lib/redis/connection';
import type { OrderLocks } from '@/lib/security/order-lock';
import type { RateLimitDecision, RateLimiter, RateLimitRule } from '@/lib/security/rate-limit';
import type { ShipStationRateBudget } from '@/lib/shipping/rate-budget';
import type { ShippedStatusMemory } from '@/lib/store/shipped-status';

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
}

export class OrderLocksWithFallback implements OrderLocks {
  constructor(
    private readonly shared: OrderLocks,
    private readonly local: OrderLocks,
    private readonly warning: FallbackWarning,
  ) {}

  async withOrderLock<T>(orderId: number, task: () => Promise<T>): Promise<T> {
    let started = false;
    const once = () => {
      started = true;
      return task();
    };
    try {
      return await this.shared.withOrderLock(orderId, once);
    } catch (error) {
      // Only a lock that could not be taken falls back; a task that ran is never run twice.
      if (started || !(error instanceof SharedStateUnavailableError)) throw error;
      this.warning.note('order_locks', error);
      return this.local.withOrderLock(orderId, task);
    }
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
