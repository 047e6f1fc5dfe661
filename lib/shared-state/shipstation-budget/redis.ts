/**
 * ShipStation's request budget (lib/shared-state/shipstation-budget/rate-budget.ts) shared by every
 * instance that uses one ShipStation account: one Redis hash per account
 * (named by a digest of the API key, never the key), changed by Lua scripts
 * that follow MemoryShipStationRateBudget step for step, one round trip each.
 */
import { createHash } from 'node:crypto';
import { KEY_PREFIX, RedisScript, type RedisConnection } from '@/lib/redis/connection';
import {
  BUDGET_WINDOW_MS,
  readBudgetHeaders,
  SHIPSTATION_REQUESTS_PER_MINUTE,
  SHIPSTATION_V2_REQUESTS_PER_MINUTE,
  throttledForMs,
  type ShipStationRateBudget,
} from '@/lib/shared-state/shipstation-budget/rate-budget';

/** The hash outlives any window it can describe (Reset is capped at 120 s). */
const STATE_TTL_MS = 5 * 60_000;

// KEYS[1] the account's hash; ARGV: now, window ms, default limit, state TTL ms.
const STATE = `
local s = redis.call('HMGET', KEYS[1], 'limit', 'remaining', 'resetAt')
local limit = tonumber(s[1]) or tonumber(ARGV[3])
local remaining = tonumber(s[2]) or limit
local resetAt = tonumber(s[3]) or 0
local now = tonumber(ARGV[1])
`;
const SAVE = `
redis.call('HSET', KEYS[1], 'limit', limit, 'remaining', remaining, 'resetAt', resetAt)
redis.call('PEXPIRE', KEYS[1], ARGV[4])
`;

const RESERVE = new RedisScript(`${STATE}
if now >= resetAt then
  remaining = limit
  resetAt = now + tonumber(ARGV[2])
end
local wait = 0
if remaining > 0 then remaining = remaining - 1 else wait = resetAt - now end
${SAVE}
return wait
`);

// ARGV[5] reported limit or '', ARGV[6] reported remaining or '', ARGV[7] reset in ms or ''.
const OBSERVE = new RedisScript(`${STATE}
if ARGV[5] ~= '' then limit = tonumber(ARGV[5]) end
if ARGV[6] ~= '' then
  local reportedResetAt = now + tonumber(ARGV[7])
  local reported = tonumber(ARGV[6])
  if reportedResetAt > resetAt + 1000 then remaining = reported else remaining = math.min(reported, remaining) end
  resetAt = reportedResetAt
end
${SAVE}
return 0
`);

// ARGV[5] how long the 429 stops requests, in ms.
const THROTTLED = new RedisScript(`${STATE}
remaining = 0
resetAt = now + tonumber(ARGV[5])
${SAVE}
return 0
`);

export class RedisShipStationRateBudget implements ShipStationRateBudget {
  private readonly key: string;
  private readonly now: () => number;
  private readonly perMinute: number;

  /** `api: 'v2'` is the V2 API's budget: its own hash and limit, never shared with a V1 key's. */
  constructor(
    private readonly connection: RedisConnection,
    account: string,
    options: { prefix?: string; now?: () => number; api?: 'v1' | 'v2' } = {},
  ) {
    const digest = createHash('sha256').update(account).digest('hex').slice(0, 16);
    const v2 = options.api === 'v2';
    this.key = `${options.prefix ?? KEY_PREFIX}shipstation:budget:${v2 ? 'v2:' : ''}${digest}`;
    this.now = options.now ?? Date.now;
    this.perMinute = v2 ? SHIPSTATION_V2_REQUESTS_PER_MINUTE : SHIPSTATION_REQUESTS_PER_MINUTE;
  }

  private run(name: string, script: RedisScript, extra: string[] = []): Promise<unknown> {
    const args = [String(this.now()), String(BUDGET_WINDOW_MS), String(this.perMinute), String(STATE_TTL_MS), ...extra];
    return this.connection.run(name, (redis) => script.run(redis, [this.key], args));
  }

  async reserve(): Promise<number> {
    return Number(await this.run('shipstation_budget_reserve', RESERVE));
  }

  async observe(headers: Headers): Promise<void> {
    const report = readBudgetHeaders(headers);
    await this.run('shipstation_budget_observe', OBSERVE, [
      report.limit === undefined ? '' : String(report.limit),
      report.window ? String(report.window.remaining) : '',
      report.window ? String(report.window.resetInMs) : '',
    ]);
  }

  async throttled(headers: Headers): Promise<void> {
    await this.run('shipstation_budget_throttled', THROTTLED, [String(throttledForMs(headers))]);
  }
}
