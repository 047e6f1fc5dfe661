/**
 * The rate limiter shared by every instance (spec section 8): the same fixed,
 * clock-aligned windows, limits and answers as MemoryRateLimiter, counted in
 * Redis so a client spread over many instances meets one limit.
 *
 * One round trip per request: a Lua script increments the window's counter and,
 * on its first hit, sets the counter to expire when the window ends. The window
 * start is part of the key, so a new window is a new counter and nothing has
 * to be reset.
 */
import { KEY_PREFIX, RedisScript, type RedisConnection } from '@/lib/redis/connection';
import {
  rateLimitDecision,
  windowStart,
  type RateLimitDecision,
  type RateLimiter,
  type RateLimitRule,
} from '@/lib/security/rate-limit';

/** A counter outlives its window by this much, so an instance whose clock runs a little behind still finds it. */
const EXPIRY_SLACK_MS = 5_000;

const COUNT_HIT = new RedisScript(`
local count = redis.call('INCR', KEYS[1])
if count == 1 then redis.call('PEXPIREAT', KEYS[1], ARGV[1]) end
return count
`);

export class RedisRateLimiter implements RateLimiter {
  private readonly prefix: string;
  private readonly now: () => number;

  constructor(
    private readonly connection: RedisConnection,
    options: { prefix?: string; now?: () => number } = {},
  ) {
    this.prefix = `${options.prefix ?? KEY_PREFIX}ratelimit:`;
    this.now = options.now ?? Date.now;
  }

  async hit(rule: RateLimitRule, client: string): Promise<RateLimitDecision> {
    const start = windowStart(rule, this.now());
    const key = `${this.prefix}${rule.name}:${start}:${client}`;
    const count = await this.connection.run('rate_limit', async (redis) =>
      Number(await COUNT_HIT.run(redis, [key], [String(start + rule.windowMs + EXPIRY_SLACK_MS)])),
    );
    return rateLimitDecision(rule, start, count);
  }
}
