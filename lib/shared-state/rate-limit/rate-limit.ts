/**
 * Fixed-window rate limiting per client and endpoint (docs/contract.md#spec-8).
 *
 * Windows are aligned to the clock (floor(now / window)), so every instance
 * and a shared store agree on when a window ends. The in-process limiter keeps
 * its counters in a bounded LRU cache: a flood of distinct addresses evicts
 * the oldest counters instead of growing memory without limit.
 */
import { LRUCache } from 'lru-cache';
import type { PendingRateLimitHit } from '@/lib/shared-state/rate-limit/pending';
import type { RateLimitDecision, RateLimitRule } from '@/lib/shared-state/rate-limit/types';

export type { RateLimitDecision, RateLimitRule };

export interface RateLimiter {
  /** Counts one request from `client` against `rule` and says whether it may proceed. */
  hit(rule: RateLimitRule, client: string): Promise<RateLimitDecision>;
  /**
   * With Redis: the hit, to be counted by the request's first Redis script
   * (lib/shared-state/rate-limit/pending.ts). Absent in process memory, where a hit costs nothing.
   */
  defer?(rule: RateLimitRule, client: string): PendingRateLimitHit;
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

/** The answer for the `count`th request of the window that began at `start` (every implementation's). */
export function rateLimitDecision(rule: RateLimitRule, start: number, count: number): RateLimitDecision {
  return {
    allowed: count <= rule.limit,
    limit: rule.limit,
    remaining: Math.max(0, rule.limit - count),
    resetAt: start + rule.windowMs,
  };
}

interface Window {
  start: number;
  count: number;
}

export class MemoryRateLimiter implements RateLimiter {
  private cache: LRUCache<string, Window> | undefined;
  private readonly maxClients: number;
  private readonly now: () => number;

  constructor(options: { maxClients?: number; now?: () => number } = {}) {
    this.maxClients = options.maxClients ?? 50_000;
    this.now = options.now ?? Date.now;
  }

  /** Built on first use: with Redis it is only the fallback, and its allocation would land on a route's first request. */
  private get windows(): LRUCache<string, Window> {
    return (this.cache ??= new LRUCache({ max: this.maxClients }));
  }

  async hit(rule: RateLimitRule, client: string): Promise<RateLimitDecision> {
    const now = this.now();
    const start = windowStart(rule, now);
    const key = `${rule.name}\u0000${client}`;
    let window = this.windows.get(key);
    if (!window || window.start !== start) {
      window = { start, count: 0 };
      this.windows.set(key, window);
    }
    window.count += 1;
    return rateLimitDecision(rule, start, window.count);
  }

  /** How many counters are held (for tests and benchmarks). */
  get size(): number {
    return this.windows.size;
  }
}
