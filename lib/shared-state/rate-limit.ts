/**
 * The rate limit (docs/contract.md#spec-8): fixed, clock-aligned windows per client and endpoint, counted in this
 * instance's memory, or in Redis (lib/shared-state/request-redis.ts) with this memory when Redis fails. With Redis a
 * request's hit is deferred: its first Redis script counts it in the same round trip (docs/decisions.md#d31).
 */
import { LRUCache } from 'lru-cache';
import type { Config } from '@/lib/config';
import { RateLimitedError, type RateLimitState } from '@/lib/errors';
import { clientIp } from '@/lib/http/client-ip';
import { currentRequest } from '@/lib/request-scope';
import { eitherOf, type FallbackWarning } from '@/lib/shared-state/fallback';

export interface RateLimitRule {
  name: string;
  limit: number;
  windowMs: number;
}

export type RateLimitDecision = RateLimitState & { allowed: boolean };

export interface RateLimiter {
  hit(rule: RateLimitRule, client: string): Promise<RateLimitDecision>;
  /** With Redis: the hit, for the request's first Redis script to count. Absent in memory, where a hit costs nothing. */
  defer?(rule: RateLimitRule, client: string): DeferredRateLimitHit;
}

export const RATE_LIMITS = {
  paymentIntent: { name: 'payment-intent', limit: 10, windowMs: 60_000 },
  submitOrder: { name: 'submit-order', limit: 10, windowMs: 60_000 },
  shippingRates: { name: 'express-shipping-rates', limit: 10, windowMs: 60_000 },
  shippingRate: { name: 'express-shipping-rate', limit: 10, windowMs: 60_000 },
  cardWebhook: { name: 'cardprovider-webhook', limit: 100, windowMs: 60_000 },
  shippingWebhook: { name: 'shipping-webhook', limit: 100, windowMs: 60_000 },
} as const satisfies Record<string, RateLimitRule>;

/** The window `now` falls in: aligned to the clock, so every instance agrees on it. */
export function windowStart(rule: RateLimitRule, now: number): number {
  return Math.floor(now / rule.windowMs) * rule.windowMs;
}

export function rateLimitDecision(rule: RateLimitRule, start: number, count: number): RateLimitDecision {
  return {
    allowed: count <= rule.limit,
    limit: rule.limit,
    remaining: Math.max(0, rule.limit - count),
    resetAt: start + rule.windowMs,
  };
}

/** Counters in a bounded LRU cache: a flood of distinct addresses evicts the oldest instead of growing memory. */
export class MemoryRateLimiter implements RateLimiter {
  private cache: LRUCache<string, { start: number; count: number }> | undefined;

  constructor(private readonly options: { maxClients?: number; now?: () => number } = {}) {}

  /** Built on first use: with Redis it is only the fallback, and its allocation would land on a route's first request. */
  private get windows(): LRUCache<string, { start: number; count: number }> {
    return (this.cache ??= new LRUCache({ max: this.options.maxClients ?? 50_000 }));
  }

  async hit(rule: RateLimitRule, client: string): Promise<RateLimitDecision> {
    const start = windowStart(rule, (this.options.now ?? Date.now)());
    const key = `${rule.name}\u0000${client}`;
    let window = this.windows.get(key);
    if (!window || window.start !== start) {
      window = { start, count: 0 };
      this.windows.set(key, window);
    }
    window.count += 1;
    return rateLimitDecision(rule, start, window.count);
  }

  get size(): number {
    return this.windows.size;
  }
}

/** The Redis limiter with this instance's counters when Redis fails (lib/shared-state/fallback.ts). */
export function rateLimiterWithFallback(shared: RateLimiter, local: RateLimiter, warning: FallbackWarning): RateLimiter {
  const hit = (rule: RateLimitRule, client: string) =>
    eitherOf('rate_limiter', warning, () => shared.hit(rule, client), () => local.hit(rule, client));
  return {
    hit,
    // A script that carries the hit and fails counts it here, as `hit` would have on the same failure.
    defer: (rule, client) => new DeferredRateLimitHit(rule, client, () => hit(rule, client), () => local.hit(rule, client)),
  };
}

function assertAllowed(decision: RateLimitDecision): void {
  if (!decision.allowed) throw new RateLimitedError(decision);
}

/**
 * A request's hit that its first Redis script counts (the order's lock, or the event check), or else the request's
 * end or its first upstream call (lib/telemetry.ts `traceCall`), whichever comes first: a 429 never follows upstream
 * work. A call that `traceCall` does not wrap (the ShipStation V2 keys) counts it first with `countRateLimitHitNow`.
 */
export class DeferredRateLimitHit {
  private decision: Promise<RateLimitDecision> | undefined;

  constructor(
    readonly rule: RateLimitRule,
    readonly client: string,
    private readonly countAlone: () => Promise<RateLimitDecision>,
    private readonly countInMemory: () => Promise<RateLimitDecision>,
  ) {}

  /** The hit for a script about to run, or undefined when it is counted (or being counted) already. */
  takeForScript() {
    if (this.decision) return undefined;
    let settle!: (decision: RateLimitDecision | Promise<RateLimitDecision>) => void;
    this.decision = new Promise<RateLimitDecision>((resolve) => (settle = resolve));
    // A count in memory that throws leaves the rejection here too; countUnlessCounted() reports it, nobody else need listen.
    this.decision.catch(() => undefined);
    return {
      rule: this.rule,
      client: this.client,
      /** The script counted it: throws RateLimitedError when over the limit. */
      counted: (decision: RateLimitDecision) => {
        settle(decision);
        assertAllowed(decision);
      },
      /** The script failed before counting it: counted in this instance's memory instead (may throw RateLimitedError). */
      countLocally: async () => {
        const decision = this.countInMemory();
        settle(decision);
        assertAllowed(await decision);
      },
    };
  }

  async countUnlessCounted(): Promise<void> {
    this.decision ??= this.countAlone();
    assertAllowed(await this.decision);
  }
}

/** Counts the request's client against `rule` (RateLimitedError when over), or defers the hit to its first Redis script. */
export async function countRateLimitHit(
  limiter: RateLimiter,
  rule: RateLimitRule,
  headers: Headers,
  config: Pick<Config, 'trustProxyHops' | 'clientIpHeader'>,
): Promise<void> {
  const client = clientIp(headers, config.trustProxyHops, config.clientIpHeader);
  const request = currentRequest();
  if (request && limiter.defer) request.notes.rateLimitHit = limiter.defer(rule, client);
  else assertAllowed(await limiter.hit(rule, client));
}

/** A deferred hit, taken by the Redis script about to run. */
export type HitForScript = NonNullable<ReturnType<DeferredRateLimitHit['takeForScript']>>;

export function takeDeferredHit(): HitForScript | undefined {
  return (currentRequest()?.notes.rateLimitHit as DeferredRateLimitHit | undefined)?.takeForScript();
}
