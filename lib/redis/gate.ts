/**
 * The two scripts on a request's critical path (docs/operations.md, "Round trips per
 * request"): ENTRY counts the request's rate-limit hit, checks whether its
 * event is remembered and takes the order's lock, in one round trip; LEAVE
 * remembers the event and releases the lock, in another.
 *
 * ENTRY stops at the first "no": over the limit, it neither checks nor locks
 * (the request answers 429 and touches nothing); an event remembered already
 * is answered without the lock (a duplicate delivery costs this one round
 * trip). Each part is optional: a retry for a busy order locks only, a
 * reconciliation unit has no rate limit, an event whose order is still
 * unknown checks only.
 * With the lock taken, ENTRY can also read one key the holder needs (a lock's
 * `peek`, lib/shared-state/order-locks/order-locks.ts): the shipping webhook learns there
 * whether the store lacks the `shipped` status, instead of a round trip of its
 * own under the lock.
 *
 * One hash slot: a script may only touch keys of one slot on a Redis Cluster,
 * and a request's keys are per client (the rate limit), per event and per
 * order. They all carry one hash tag, `{gate}`, so every such key of the
 * service lives in one slot: right for a single Redis (self-hosted, Upstash,
 * Redis Cloud without clustering, a primary with replicas); on a Cluster it
 * runs, on one shard, which holds a shop's load many times over.
 */
import { RedisScript, type RedisClient } from '@/lib/redis/connection';
import type { ClaimedHit } from '@/lib/shared-state/rate-limit/pending';
import { rateLimitDecision, windowStart, type RateLimitRule } from '@/lib/shared-state/rate-limit/rate-limit';

/** The hash tag of every key a gate script touches. */
export const GATE_TAG = '{gate}:';

export function gateKeys(prefix: string) {
  const base = `${prefix}${GATE_TAG}`;
  return {
    rateLimit: (rule: RateLimitRule, start: number, client: string) => `${base}ratelimit:${rule.name}:${start}:${client}`,
    lock: (orderId: number) => `${base}lock:order:${orderId}`,
    event: (eventKey: string) => `${base}event:${eventKey}`,
    /** Read by the shipping webhook's entry (a peek), so it shares the slot (lib/shared-state/shipped-status/redis.ts). */
    shippedStatusMissing: `${base}store:shipped-status-missing`,
  };
}

/** A counter outlives its window by this much, so an instance whose clock runs a little behind still finds it. */
export const RATE_EXPIRY_SLACK_MS = 5_000;

/** The counter's INCR and, on its first hit, its expiry at the window's end; shared by ENTRY and the limiter's own script. */
export const COUNT_HIT_LUA = `
local count = redis.call('INCR', KEYS[1])
if count == 1 then redis.call('PEXPIREAT', KEYS[1], ARGV[1]) end
return count
`;

/**
 * KEYS, in this order, each present when ARGV[1] names it: r the rate counter,
 * e the event, l the lock, p the key to peek at once the lock is taken. ARGV: 1
 * the parts, 2 the counter's expiry (ms), 3 the limit, 4 the lock token, 5 the
 * lock TTL (ms).
 * Answers {count or -1, remembered 0/1, locked 0/1, peeked key exists 0/1}.
 */
const ENTRY = new RedisScript(`
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
const LEAVE = new RedisScript(`
if KEYS[2] then redis.call('SET', KEYS[2], '1', 'PX', ARGV[2]) end
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`);

/**
 * Loads the scripts every request runs into Redis' script cache, when the
 * instance starts (lib/preload.ts): the first request's EVALSHA then finds its
 * script, instead of hearing NOSCRIPT and sending the text again (a second
 * round trip, and the script compiled, on its path). The same text gives the
 * same SHA1 in every copy of this module.
 */
export function loadRequestScripts(redis: RedisClient): Promise<unknown> {
  return Promise.all([ENTRY.source, LEAVE.source, COUNT_HIT_LUA].map((source) => redis.scriptLoad(source)));
}

export interface EntryRequest {
  hit?: ClaimedHit;
  eventKey?: string;
  /** `peekKey`: a key read once the lock is taken (a full key, under GATE_TAG). */
  lock?: { orderId: number; token: string; ttlMs: number; peekKey?: string };
}

export type EntryReply = [number, number, number, number];

export interface EntryAnswer {
  remembered: boolean;
  locked: boolean;
  /** Whether the lock's peek key exists; false when there is none or the lock was not taken. */
  peeked: boolean;
}

/** The script's call for `request`, and how to read its answer (which may throw RateLimitedError). */
export function entryCall(prefix: string, request: EntryRequest, now = Date.now()) {
  const keys = gateKeys(prefix);
  const keyList: string[] = [];
  let parts = '';
  let expireAt = '0';
  let limit = '0';
  let start = 0;
  if (request.hit) {
    start = windowStart(request.hit.rule, now);
    keyList.push(keys.rateLimit(request.hit.rule, start, request.hit.client));
    expireAt = String(start + request.hit.rule.windowMs + RATE_EXPIRY_SLACK_MS);
    limit = String(request.hit.rule.limit);
    parts += 'r';
  }
  if (request.eventKey !== undefined) {
    keyList.push(keys.event(request.eventKey));
    parts += 'e';
  }
  if (request.lock) {
    keyList.push(keys.lock(request.lock.orderId));
    parts += 'l';
    if (request.lock.peekKey !== undefined) {
      keyList.push(request.lock.peekKey);
      parts += 'p';
    }
  }
  const args = [parts, expireAt, limit, request.lock?.token ?? '', String(request.lock?.ttlMs ?? 0)];
  return {
    keys: keyList,
    send: (redis: RedisClient) => ENTRY.run(redis, keyList, args) as Promise<EntryReply>,
    /** Reads the answer: the hit decided (RateLimitedError when over), then what was found. */
    read: ([count, remembered, locked, peeked]: EntryReply): EntryAnswer => {
      if (request.hit) request.hit.decided(rateLimitDecision(request.hit.rule, start, Number(count)));
      return { remembered: Number(remembered) === 1, locked: Number(locked) === 1, peeked: Number(peeked) === 1 };
    },
  };
}

/** A claimed hit whose script failed before it could count it: counted in this instance's memory, then the failure goes on. */
export async function fallBackHit(hit: ClaimedHit | undefined, error: unknown): Promise<never> {
  // connection.run turns every failure into SharedStateUnavailableError; anything else still must not leave the hit undecided.
  if (hit) await hit.fellBack();
  throw error;
}

export function leaveCall(prefix: string, orderId: number, token: string, remember?: { eventKey: string; ttlMs: number }) {
  const keys = gateKeys(prefix);
  const keyList = [keys.lock(orderId), ...(remember ? [keys.event(remember.eventKey)] : [])];
  const args = [token, String(remember?.ttlMs ?? 0)];
  return Object.assign((redis: RedisClient) => LEAVE.run(redis, keyList, args), { keys: keyList });
}
