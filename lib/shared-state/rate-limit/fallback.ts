/** The rate limits when Redis fails: this instance's counters (lib/shared-state/fallback.ts says when). */
import { eitherOf, type FallbackWarning } from '@/lib/shared-state/fallback';
import { PendingRateLimitHit } from '@/lib/shared-state/rate-limit/pending';
import type { RateLimitDecision, RateLimiter, RateLimitRule } from '@/lib/shared-state/rate-limit/rate-limit';

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
