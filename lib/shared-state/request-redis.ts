/**
 * Everything a request sends to Redis on its critical path (docs/operations.md, "Round trips per request"):
 * COUNT_CHECK_LOCK counts its rate-limit hit, checks whether its event is remembered and takes the order's lock, in
 * one round trip; REMEMBER_UNLOCK remembers the event and releases the lock, in another; COUNT_CHECK_LOCK alone
 * counts a hit that no script carried (RedisRateLimiter). Every key carries one hash tag, `{gate}`, so a script's keys share one Redis Cluster slot (docs/decisions.md#d31).
 */
import { KEY_PREFIX, RedisScript, type RedisClient, type RedisConnection } from '@/lib/redis/connection';
import {
  rateLimitDecision,
  windowStart,
  type HitForScript,
  type RateLimitDecision,
  type RateLimiter,
  type RateLimitRule,
} from '@/lib/shared-state/rate-limit';

export function requestKeys(prefix: string) {
  const base = `${prefix}{gate}:`;
  return {
    rateLimit: (rule: RateLimitRule, start: number, client: string) => `${base}ratelimit:${rule.name}:${start}:${client}`,
    lock: (orderId: number) => `${base}lock:order:${orderId}`,
    event: (eventKey: string) => `${base}event:${eventKey}`,
    /** Read with the shipping webhook's lock, so it shares the slot (lib/shared-state/shipped-status.ts). */
    shippedStatusMissing: `${base}store:shipped-status-missing`,
  };
}

/** A counter outlives its window by this much, so an instance whose clock runs a little behind still finds it. */
const RATE_EXPIRY_SLACK_MS = 5_000;

const counterExpiry = (rule: RateLimitRule | undefined, start: number) =>
  rule ? String(start + rule.windowMs + RATE_EXPIRY_SLACK_MS) : '0';

/**
 * Stops at the first "no": over the limit it neither checks nor locks; a remembered event is answered without the lock.
 * KEYS, each present when ARGV[1] names it: r the rate counter, e the event, l the lock, p a key read once the lock is
 * taken. ARGV: 1 the parts, 2 the counter's expiry (ms), 3 the limit, 4 the lock token, 5 the lock TTL (ms).
 * Answers {count or -1, remembered 0/1, locked 0/1, read key exists 0/1}.
 */
const COUNT_CHECK_LOCK = new RedisScript(`
local parts = ARGV[1]
local i = 1
local count = -1
if string.find(parts, 'r', 1, true) then
  count = redis.call('INCR', KEYS[i])
  if count == 1 then redis.call('PEXPIREAT', KEYS[i], ARGV[2]) end
  i = i + 1
  if count > tonumber(ARGV[3]) then return {count, 0, 0, 0} end
end
if string.find(parts, 'e', 1, true) then
  if redis.call('EXISTS', KEYS[i]) == 1 then return {count, 1, 0, 0} end
  i = i + 1
end
if string.find(parts, 'l', 1, true) then
  -- Held with this call's own token: a repeat after a cut (lib/redis/connection.ts) finds its lock taken.
  if not redis.call('SET', KEYS[i], ARGV[4], 'NX', 'PX', ARGV[5]) and redis.call('GET', KEYS[i]) ~= ARGV[4] then return {count, 0, 0, 0} end
  if string.find(parts, 'p', 1, true) then return {count, 0, 1, redis.call('EXISTS', KEYS[i + 1])} end
  return {count, 0, 1, 0}
end
return {count, 0, 0, 0}
`);

/** KEYS: 1 the lock, 2 the event to remember (optional). ARGV: 1 the token, 2 the event's TTL (ms). */
const REMEMBER_UNLOCK = new RedisScript(`
if KEYS[2] then redis.call('SET', KEYS[2], '1', 'PX', ARGV[2]) end
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`);

/** Loaded when the instance starts (lib/preload.ts), so a first request's EVALSHA never hears NOSCRIPT. */
export function loadRequestScripts(redis: RedisClient): Promise<unknown> {
  return Promise.all([COUNT_CHECK_LOCK, REMEMBER_UNLOCK].map((script) => redis.scriptLoad(script.source)));
}

export interface CountCheckLockRequest {
  hit?: HitForScript;
  eventKey?: string;
  /** `peekKey`: a full key (under the `{gate}` tag) read once the lock is taken. */
  lock?: { orderId: number; token: string; ttlMs: number; peekKey?: string };
}

export type CountCheckLockReply = [number, number, number, number];

/** The script's call for `request`, and how to read its answer (which may throw RateLimitedError). */
export function countCheckLock(prefix: string, request: CountCheckLockRequest, now = Date.now()) {
  const keys = requestKeys(prefix);
  const { hit, eventKey, lock } = request;
  const start = hit ? windowStart(hit.rule, now) : 0;
  // In the script's order, each part named by its letter.
  const parts = Object.entries({
    r: hit && keys.rateLimit(hit.rule, start, hit.client),
    e: eventKey === undefined ? undefined : keys.event(eventKey),
    l: lock && keys.lock(lock.orderId),
    p: lock?.peekKey,
  }).filter((part): part is [string, string] => part[1] !== undefined);
  const keyList = parts.map(([, key]) => key);
  const letters = parts.map(([letter]) => letter).join('');
  const args = [letters, counterExpiry(hit?.rule, start), String(hit?.rule.limit ?? 0), lock?.token ?? '', String(lock?.ttlMs ?? 0)];
  return {
    keys: keyList,
    send: (redis: RedisClient) => COUNT_CHECK_LOCK.run(redis, keyList, args) as Promise<CountCheckLockReply>,
    read: ([count, remembered, locked, peeked]: CountCheckLockReply) => {
      hit?.counted(rateLimitDecision(hit.rule, start, Number(count)));
      return { remembered: Number(remembered) === 1, locked: Number(locked) === 1, peeked: Number(peeked) === 1 };
    },
  };
}

/** A hit whose script failed before it could count it: counted in this instance's memory, then the failure goes on. */
export async function countLocallyAndRethrow(hit: HitForScript | undefined, error: unknown): Promise<never> {
  if (hit) await hit.countLocally();
  throw error;
}

export function rememberUnlock(prefix: string, orderId: number, token: string, remember?: { eventKey: string; ttlMs: number }) {
  const keys = requestKeys(prefix);
  const keyList = [keys.lock(orderId), ...(remember ? [keys.event(remember.eventKey)] : [])];
  const args = [token, String(remember?.ttlMs ?? 0)];
  return Object.assign((redis: RedisClient) => REMEMBER_UNLOCK.run(redis, keyList, args), { keys: keyList });
}

/** The rate limit shared by every instance: the same windows and answers as MemoryRateLimiter, one round trip a hit. */
export class RedisRateLimiter implements RateLimiter {
  constructor(
    private readonly connection: RedisConnection,
    private readonly options: { prefix?: string; now?: () => number } = {},
  ) {}

  async hit(rule: RateLimitRule, client: string): Promise<RateLimitDecision> {
    const start = windowStart(rule, (this.options.now ?? Date.now)());
    const keys = [requestKeys(this.options.prefix ?? KEY_PREFIX).rateLimit(rule, start, client)];
    const args = ['r', counterExpiry(rule, start), String(rule.limit), '', '0'];
    const [count] = (await this.connection.run('rate_limit', (redis) => COUNT_CHECK_LOCK.run(redis, keys, args))) as CountCheckLockReply;
    return rateLimitDecision(rule, start, Number(count));
  }
}
