/**
 * Store shielding (docs/operations.md, "Store shielding"): at most STORE_MAX_CONCURRENCY calls to WooCommerce at once,
 * across every instance. The slots are leases, each as long as one attempt may last, ending by themselves when their
 * holder dies. Each class of caller may be guaranteed some (STORE_RESERVED_SLOTS); a later call of an admitted request
 * (a follow-up) ignores the split and goes first. Held in memory, or in Redis for every instance with this instance's
 * own semaphore (the same limit and split) while Redis is down; waited for by lib/shared-state/store-gate.ts.
 */
import type { SlotSplit, StoreCaller } from '@/lib/config';
import { KEY_PREFIX, RedisScript, type RedisConnection } from '@/lib/redis/connection';

export interface SlotRequest {
  caller: StoreCaller;
  /** A later call of an admitted request: ignores the split, and new requests wait while it waits. */
  followUp: boolean;
  /** Names the lease (and the waiting follow-up). */
  token: string;
  /** How long the lease lives unless released: one attempt's timeout plus LEASE_MARGIN_MS. */
  leaseMs: number;
}

export interface SlotLease {
  /** Gives the slot back; never throws (a lease that cannot be given back expires). */
  release(): Promise<void>;
  /** Passes the slot straight to another call of this instance: the count never drops, no one takes it in between. */
  handOver(next: SlotRequest): SlotLease;
}

export interface StoreSlots {
  /** A slot when the split allows it, else undefined at once; a refused follow-up counts as waiting for WAITER_TTL_MS. */
  tryAcquire(request: SlotRequest): Promise<SlotLease | undefined>;
  /** A waiting follow-up that gave up. */
  stopWaiting(token: string): Promise<void>;
  usage(): Promise<SlotUsage>;
}

/** A lease outlives its attempt's timeout by this much, the time to notice a dead holder aside. */
export const LEASE_MARGIN_MS = 2_000;
/** A waiting follow-up that stops asking (its instance died) stops holding new requests back after this. */
export const WAITER_TTL_MS = 200;

/** Whether `request` may take a slot now: the one rule of both implementations (RedisStoreSlots runs it in Lua). */
export function admits(split: SlotSplit, inUse: Record<StoreCaller, number>, waiting: number, request: Pick<SlotRequest, 'caller' | 'followUp'>): boolean {
  const total = inUse.checkout + inUse.webhook + inUse.background;
  if (request.followUp) return total < split.limit;
  let heldBack = waiting;
  if (request.caller !== 'checkout') heldBack += Math.max(0, split.reserved.checkout - inUse.checkout);
  if (request.caller !== 'webhook') heldBack += Math.max(0, split.reserved.webhook - inUse.webhook);
  return total + 1 + heldBack <= split.limit;
}

/**
 * `waiting`: later calls of admitted requests waiting for a slot. `scope`: where the count is kept, Redis (every
 * instance) or this instance alone (no Redis, or Redis down).
 */
function usageOf(split: SlotSplit, inUse: Record<StoreCaller, number>, waiting: number, scope: 'all_instances' | 'this_instance') {
  return { limit: split.limit, reserved: { ...split.reserved }, inUse, waiting, scope };
}

export type SlotUsage = ReturnType<typeof usageOf>;

/** This instance's slots: the semaphore without Redis, and the fallback while Redis is down. */
export class MemoryStoreSlots implements StoreSlots {
  private readonly leases = new Map<string, { caller: StoreCaller; expiresAt: number }>();
  private readonly waiters = new Map<string, number>();

  constructor(
    private readonly split: SlotSplit,
    private readonly now: () => number = Date.now,
  ) {}

  async tryAcquire(request: SlotRequest): Promise<SlotLease | undefined> {
    const now = this.now();
    this.prune(now);
    if (!admits(this.split, this.countInUse(), this.waiters.size, request)) {
      if (request.followUp) this.waiters.set(request.token, now + WAITER_TTL_MS);
      return undefined;
    }
    return this.lease(request, now);
  }

  private lease(request: SlotRequest, now: number): SlotLease {
    this.waiters.delete(request.token);
    this.leases.set(request.token, { caller: request.caller, expiresAt: now + request.leaseMs });
    return {
      release: async () => {
        this.leases.delete(request.token);
      },
      handOver: (next) => {
        this.leases.delete(request.token);
        return this.lease(next, this.now());
      },
    };
  }

  async stopWaiting(token: string): Promise<void> {
    this.waiters.delete(token);
  }

  async usage(): Promise<SlotUsage> {
    this.prune(this.now());
    return usageOf(this.split, this.countInUse(), this.waiters.size, 'this_instance');
  }

  private prune(now: number): void {
    for (const [token, lease] of this.leases) if (lease.expiresAt <= now) this.leases.delete(token);
    for (const [token, until] of this.waiters) if (until <= now) this.waiters.delete(token);
  }

  private countInUse(): Record<StoreCaller, number> {
    const inUse = { checkout: 0, webhook: 0, background: 0 };
    for (const { caller } of this.leases.values()) inUse[caller] += 1;
    return inUse;
  }
}

/*
 * In Redis: two sorted sets in one hash slot, the leases (`<caller>|<token>` scored by their end) and the waiting
 * follow-ups (`<token>` scored by when they stop counting). One script per try drops what expired, applies `admits`
 * and takes the slot, atomically. Times are this instance's clock, as the rate limit's windows are.
 */

/** How long a set outlives its last entry: room for instances whose clocks differ. */
const KEY_SLACK_MS = 60_000;

// KEYS: leases, waiting. ARGV: now, caller, token, leaseMs, followUp (0/1), limit, reserved checkout, reserved webhook, waiter ttl, key slack.
const TRY_ACQUIRE = new RedisScript(`
local now = tonumber(ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
local used = {checkout = 0, webhook = 0, background = 0}
local total = 0
for _, member in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
  local caller = string.match(member, '^(%a+)|')
  if used[caller] ~= nil then used[caller] = used[caller] + 1 end
  total = total + 1
end
local limit = tonumber(ARGV[6])
local followUp = ARGV[5] == '1'
local admitted
if followUp then
  admitted = total < limit
else
  local heldBack = redis.call('ZCARD', KEYS[2])
  if ARGV[2] ~= 'checkout' then heldBack = heldBack + math.max(0, tonumber(ARGV[7]) - used.checkout) end
  if ARGV[2] ~= 'webhook' then heldBack = heldBack + math.max(0, tonumber(ARGV[8]) - used.webhook) end
  admitted = total + 1 + heldBack <= limit
end
local slack = tonumber(ARGV[10])
if not admitted then
  if followUp then
    redis.call('ZADD', KEYS[2], now + tonumber(ARGV[9]), ARGV[3])
    redis.call('PEXPIRE', KEYS[2], tonumber(ARGV[9]) + slack)
  end
  return 0
end
if followUp then redis.call('ZREM', KEYS[2], ARGV[3]) end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[4]), ARGV[2] .. '|' .. ARGV[3])
local last = tonumber(redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')[2])
redis.call('PEXPIRE', KEYS[1], math.max(last - now, 0) + slack)
return 1
`);

// KEYS: leases, waiting. ARGV: now, lease given up, lease taken, its end, its token, key slack.
// A slot passed from one call of an instance to the next: renamed, never counted free in between.
const HAND_OVER = new RedisScript(`
local now = tonumber(ARGV[1])
redis.call('ZREM', KEYS[1], ARGV[2])
redis.call('ZADD', KEYS[1], ARGV[4], ARGV[3])
redis.call('ZREM', KEYS[2], ARGV[5])
local last = tonumber(redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')[2])
redis.call('PEXPIRE', KEYS[1], math.max(last - now, 0) + tonumber(ARGV[6]))
return 1
`);

// KEYS: leases, waiting. ARGV: now. The leases and waiters still current, by class.
const USAGE = new RedisScript(`
local now = tonumber(ARGV[1])
local used = {checkout = 0, webhook = 0, background = 0}
for _, member in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. now, '+inf')) do
  local caller = string.match(member, '^(%a+)|')
  if used[caller] ~= nil then used[caller] = used[caller] + 1 end
end
return {used.checkout, used.webhook, used.background, redis.call('ZCOUNT', KEYS[2], '(' .. now, '+inf')}
`);

export class RedisStoreSlots implements StoreSlots {
  /** The leases and the waiting follow-ups, under one hash tag: a Redis Cluster runs a script on one slot only. */
  private readonly keys: [string, string];
  private readonly now: () => number;

  constructor(
    private readonly connection: RedisConnection,
    private readonly split: SlotSplit,
    options: { prefix?: string; now?: () => number } = {},
  ) {
    const base = `${options.prefix ?? KEY_PREFIX}{store-slots}:`;
    this.keys = [`${base}leases`, `${base}waiting`];
    this.now = options.now ?? Date.now;
  }

  async tryAcquire(request: SlotRequest): Promise<SlotLease | undefined> {
    const { limit, reserved } = this.split;
    const { caller, token, leaseMs, followUp } = request;
    const split = [limit, reserved.checkout, reserved.webhook];
    const args = [this.now(), caller, token, leaseMs, followUp ? 1 : 0, ...split, WAITER_TTL_MS, KEY_SLACK_MS];
    const taken = await this.connection.run('store_slot_acquire', (redis) => TRY_ACQUIRE.run(redis, this.keys, args.map(String)));
    return Number(taken) === 1 ? this.lease(request) : undefined;
  }

  private lease(request: SlotRequest): SlotLease {
    const member = `${request.caller}|${request.token}`;
    return {
      release: async () => {
        // Redis is away: the lease ends by itself at its expiry.
        await this.connection.run('store_slot_release', (redis) => redis.zRem(this.keys[0], member)).catch(() => undefined);
      },
      handOver: (next) => {
        const now = this.now();
        const args = [String(now), member, `${next.caller}|${next.token}`, String(now + next.leaseMs), next.token, String(KEY_SLACK_MS)];
        void this.connection
          .run('store_slot_hand_over', (redis) => HAND_OVER.run(redis, this.keys, args))
          // Redis is away: the old lease ends by itself, and the call runs on it meanwhile.
          .catch(() => undefined);
        return this.lease(next);
      },
    };
  }

  async stopWaiting(token: string): Promise<void> {
    await this.connection.run('store_slot_stop_waiting', (redis) => redis.zRem(this.keys[1], token));
  }

  async usage(): Promise<SlotUsage> {
    const now = String(this.now());
    const counts = (await this.connection.run('store_slot_usage', (redis) => USAGE.run(redis, this.keys, [now]))) as number[];
    const [checkout = 0, webhook = 0, background = 0, waiting = 0] = counts.map(Number);
    return usageOf(this.split, { checkout, webhook, background }, waiting, 'all_instances');
  }
}
