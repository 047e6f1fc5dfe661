/**
 * The store's slots (lib/shared-state/store-slots/store-slots.ts) held in Redis, so the cap on
 * concurrent store calls holds across every instance.
 *
 * Two sorted sets in one hash slot (`{store-slots}`): the leases, member
 * `<caller>|<token>` scored by when the lease ends, and the waiting follow-ups,
 * member `<token>` scored by when the wait stops counting. One Lua script per
 * try drops what has expired, counts the leases of each class, applies the
 * rule of `admits` and takes the slot: one round trip, atomic, so two instances
 * can never both take the last slot. A lease whose holder died (killed
 * mid-call) ends by itself at its score; each set expires a minute after its
 * last entry, so an idle shop leaves no key behind. Giving a slot back is one
 * `ZREM`.
 *
 * Times are this instance's clock, as the rate limiter's windows are: an
 * instance whose clock runs ahead ends other instances' leases that much early.
 */
import type { SlotSplit } from '@/lib/config';
import { KEY_PREFIX, RedisScript, type RedisConnection } from '@/lib/redis/connection';
import {
  WAITER_TTL_MS,
  type SlotLease,
  type SlotRequest,
  type SlotUsage,
  type StoreSlots,
} from '@/lib/shared-state/store-slots/store-slots';

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
  private readonly leasesKey: string;
  private readonly waitingKey: string;
  private readonly now: () => number;

  constructor(
    private readonly connection: RedisConnection,
    private readonly split: SlotSplit,
    options: { prefix?: string; now?: () => number } = {},
  ) {
    // One hash tag for both keys: the script touches both, and a Redis Cluster runs a script on one slot only.
    const base = `${options.prefix ?? KEY_PREFIX}{store-slots}:`;
    this.leasesKey = `${base}leases`;
    this.waitingKey = `${base}waiting`;
    this.now = options.now ?? Date.now;
  }

  async tryAcquire(request: SlotRequest): Promise<SlotLease | undefined> {
    const taken = await this.connection.run('store_slot_acquire', async (redis) =>
      Number(
        await TRY_ACQUIRE.run(
          redis,
          [this.leasesKey, this.waitingKey],
          [
            String(this.now()),
            request.caller,
            request.token,
            String(request.leaseMs),
            request.followUp ? '1' : '0',
            String(this.split.limit),
            String(this.split.reserved.checkout),
            String(this.split.reserved.webhook),
            String(WAITER_TTL_MS),
            String(KEY_SLACK_MS),
          ],
        ),
      ),
    );
    return taken === 1 ? this.lease(request) : undefined;
  }

  private lease(request: SlotRequest): SlotLease {
    const member = `${request.caller}|${request.token}`;
    return {
      release: async () => {
        try {
          await this.connection.run('store_slot_release', (redis) => redis.zRem(this.leasesKey, member));
        } catch {
          // Redis is away: the lease ends by itself at its expiry.
        }
      },
      handOver: (next) => {
        const now = this.now();
        const args = [String(now), member, `${next.caller}|${next.token}`, String(now + next.leaseMs), next.token, String(KEY_SLACK_MS)];
        void this.connection
          .run('store_slot_hand_over', (redis) => HAND_OVER.run(redis, [this.leasesKey, this.waitingKey], args))
          // Redis is away: the old lease ends by itself, and the call runs on it meanwhile.
          .catch(() => undefined);
        return this.lease(next);
      },
    };
  }

  async stopWaiting(token: string): Promise<void> {
    await this.connection.run('store_slot_stop_waiting', (redis) => redis.zRem(this.waitingKey, token));
  }

  async usage(): Promise<SlotUsage> {
    const counts = (await this.connection.run('store_slot_usage', (redis) =>
      USAGE.run(redis, [this.leasesKey, this.waitingKey], [String(this.now())]),
    )) as number[];
    const [checkout = 0, webhook = 0, background = 0, waiting = 0] = counts.map(Number);
    return {
      limit: this.split.limit,
      reserved: { ...this.split.reserved },
      inUse: { checkout, webhook, background },
      waiting,
      scope: 'all_instances',
    };
  }
}
