/**
 * ShipStation's request budget (40 requests a minute per V1 key, 200 per V2 key), started from the documented
 * limit and corrected by each response's X-Rate-Limit headers, so the service stops asking before a 429.
 * In-process it counts one instance's requests; in Redis every instance draws on one budget per account.
 */
import { createHash } from 'node:crypto';
import { KEY_PREFIX, RedisScript, type RedisConnection } from '@/lib/redis/connection';

const SHIPSTATION_REQUESTS_PER_MINUTE = 40;
/** The V2 API's (api.shipstation.com) own budget; its 429 says how long with Retry-After. */
export const SHIPSTATION_V2_REQUESTS_PER_MINUTE = 200;
const BUDGET_WINDOW_MS = 60_000;
/** A Reset header beyond this is not believed (a misread or a unit mix-up would otherwise stall every delivery). */
const MAX_RESET_SECONDS = 120;

export interface ShipStationRateBudget {
  /** Takes one request from the budget and returns 0, or returns how many ms to wait first (nothing is taken then). */
  reserve(): Promise<number>;
  /** Adopts what a response says about the current window. */
  observe(headers: Headers): Promise<void>;
  /** A 429: nothing is left until the window ShipStation names (or Retry-After) has passed. */
  throttled(headers: Headers): Promise<void>;
}

function headerNumber(headers: Headers, name: string): number | undefined {
  const raw = headers.get(name)?.trim();
  return raw && /^\d+(\.\d+)?$/.test(raw) ? Number(raw) : undefined;
}

/** What a response's headers say, checked and capped: the limit, and the remaining count with its window's end. */
function readBudgetHeaders(headers: Headers): { limit: number | undefined; window: { remaining: number; resetInMs: number } | undefined } {
  const limit = headerNumber(headers, 'x-rate-limit-limit');
  const remaining = headerNumber(headers, 'x-rate-limit-remaining');
  const reset = headerNumber(headers, 'x-rate-limit-reset');
  return {
    limit: limit !== undefined && limit > 0 ? Math.floor(limit) : undefined,
    window:
      remaining === undefined || reset === undefined
        ? undefined
        : { remaining: Math.floor(remaining), resetInMs: Math.min(reset, MAX_RESET_SECONDS) * 1000 },
  };
}

/** How long a 429 stops requests: ShipStation's Reset, else Retry-After, else a whole window. */
function throttledForMs(headers: Headers): number {
  const seconds = headerNumber(headers, 'x-rate-limit-reset') ?? headerNumber(headers, 'retry-after') ?? BUDGET_WINDOW_MS / 1000;
  return Math.min(seconds, MAX_RESET_SECONDS) * 1000;
}

export class MemoryShipStationRateBudget implements ShipStationRateBudget {
  private remaining: number;
  private resetAt = 0;

  /** `limit` the requests a minute until a response names its own. */
  constructor(
    private readonly now: () => number = Date.now,
    private limit = SHIPSTATION_REQUESTS_PER_MINUTE,
  ) {
    this.remaining = limit;
  }

  async reserve(): Promise<number> {
    const now = this.now();
    if (now >= this.resetAt) {
      this.remaining = this.limit;
      this.resetAt = now + BUDGET_WINDOW_MS;
    }
    if (this.remaining > 0) {
      this.remaining -= 1;
      return 0;
    }
    return this.resetAt - now;
  }

  async observe(headers: Headers): Promise<void> {
    const report = readBudgetHeaders(headers);
    if (report.limit !== undefined) this.limit = report.limit;
    if (!report.window) return;
    const resetAt = this.now() + report.window.resetInMs;
    // In the window already counted, requests in flight were taken from the budget but not yet from ShipStation's
    // count: keep the lower figure. A later window (Reset is in whole seconds, hence the slack) starts from ShipStation's.
    const newerWindow = resetAt > this.resetAt + 1000;
    this.remaining = newerWindow ? report.window.remaining : Math.min(report.window.remaining, this.remaining);
    this.resetAt = resetAt;
  }

  async throttled(headers: Headers): Promise<void> {
    this.remaining = 0;
    this.resetAt = this.now() + throttledForMs(headers);
  }
}

/** The hash outlives any window it can describe (Reset is capped at 120 s). */
const STATE_TTL_MS = 5 * 60_000;

/** MemoryShipStationRateBudget's steps, one script. KEYS[1] the account's hash; ARGV: now, window ms, default limit, TTL ms, step. */
const BUDGET = new RedisScript(`
local s = redis.call('HMGET', KEYS[1], 'limit', 'remaining', 'resetAt')
local limit = tonumber(s[1]) or tonumber(ARGV[3])
local remaining = tonumber(s[2]) or limit
local resetAt = tonumber(s[3]) or 0
local now = tonumber(ARGV[1])
local wait = 0
if ARGV[5] == 'reserve' then
  if now >= resetAt then
    remaining = limit
    resetAt = now + tonumber(ARGV[2])
  end
  if remaining > 0 then remaining = remaining - 1 else wait = resetAt - now end
elseif ARGV[5] == 'throttled' then
  -- ARGV[6] how long the 429 stops requests, in ms.
  remaining = 0
  resetAt = now + tonumber(ARGV[6])
else
  -- observe: ARGV[6] reported limit or '', ARGV[7] reported remaining or '', ARGV[8] reset in ms or ''.
  if ARGV[6] ~= '' then limit = tonumber(ARGV[6]) end
  if ARGV[7] ~= '' then
    local reportedResetAt = now + tonumber(ARGV[8])
    local reported = tonumber(ARGV[7])
    if reportedResetAt > resetAt + 1000 then remaining = reported else remaining = math.min(reported, remaining) end
    resetAt = reportedResetAt
  end
end
redis.call('HSET', KEYS[1], 'limit', limit, 'remaining', remaining, 'resetAt', resetAt)
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return wait
`);

export class RedisShipStationRateBudget implements ShipStationRateBudget {
  private readonly key: string;

  /** `api: 'v2'` is the V2 API's budget: its own hash and limit, never shared with a V1 key's. */
  constructor(
    private readonly connection: RedisConnection,
    account: string,
    private readonly options: { prefix?: string; now?: () => number; api?: 'v1' | 'v2' } = {},
  ) {
    const digest = createHash('sha256').update(account).digest('hex').slice(0, 16);
    this.key = `${options.prefix ?? KEY_PREFIX}shipstation:budget:${options.api === 'v2' ? 'v2:' : ''}${digest}`;
  }

  private run(step: 'reserve' | 'observe' | 'throttled', extra: string[] = []): Promise<unknown> {
    const now = (this.options.now ?? Date.now)();
    const perMinute = this.options.api === 'v2' ? SHIPSTATION_V2_REQUESTS_PER_MINUTE : SHIPSTATION_REQUESTS_PER_MINUTE;
    const args = [String(now), String(BUDGET_WINDOW_MS), String(perMinute), String(STATE_TTL_MS), step, ...extra];
    return this.connection.run(`shipstation_budget_${step}`, (redis) => BUDGET.run(redis, [this.key], args));
  }

  async reserve(): Promise<number> {
    return Number(await this.run('reserve'));
  }

  async observe(headers: Headers): Promise<void> {
    const { limit, window } = readBudgetHeaders(headers);
    await this.run('observe', [String(limit ?? ''), String(window?.remaining ?? ''), String(window?.resetInMs ?? '')]);
  }

  async throttled(headers: Headers): Promise<void> {
    await this.run('throttled', [String(throttledForMs(headers))]);
  }
}
