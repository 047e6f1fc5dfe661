/**
 * The rate limiter shared by every instance (docs/contract.md#spec-8): the same fixed,
 * clock-aligned windows, limits and answers as MemoryRateLimiter, counted in
 * Redis so a client spread over many instances meets one limit.
 *
 * One round trip per request: a Lua script increments the window's counter and,
 * on its first hit, sets the counter to expire when the window ends. The window
 * start is part of the key, so a new window is a new counter and nothing has
 * to be reset. A request's hit usually rides in its first gate script instead
 * (lib/redis/gate.ts), under the same key; this script counts it alone.
 */
import { KEY_PREFIX, RedisScript, type RedisConnection } from '@/lib/redis/connection';
import { COUNT_HIT_LUA, gateKeys, RATE_EXPIRY_SLACK_MS } from '@/lib/redis/gate';
import {
  rateLimitDecision,
  windowStart,
  type RateLimitDecision,
  type RateLimiter,
  type RateLimitRule,
} from '@/lib/shared-state/rate-limit/rate-limit';

const COUNT_HIT = new RedisScript(COUNT_HIT_LUA);

export class RedisRateLimiter implements RateLimiter {
  private readonly keys: ReturnType<typeof gateKeys>;
  private readonly now: () => number;

  constructor(
    private readonly connection: RedisConnection,
    options: { prefix?: string; now?: () => number } = {},
  ) {
    this.keys = gateKeys(options.prefix ?? KEY_PREFIX);
    this.now = options.now ?? Date.now;
  }

  async hit(rule: RateLimitRule, client: string): Promise<RateLimitDecision> {
    const start = windowStart(rule, this.now());
    const key = this.keys.rateLimit(rule, start, client);
    const count = await this.connection.run('rate_limit', async (redis) =>
      Number(await COUNT_HIT.run(redis, [key], [String(start + rule.windowMs + RATE_EXPIRY_SLACK_MS)])),
    );
    return rateLimitDecision(rule, start, count);
  }
}
