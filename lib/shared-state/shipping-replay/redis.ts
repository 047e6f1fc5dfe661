/**
 * The shipping replay queue (lib/shared-state/shipping-replay/replay-queue.ts) in Redis,
 * shared by every instance and kept across restarts: the webhook of one
 * instance queues an update, the replay cron on any instance applies it.
 *
 * Three keys, none expiring (this is durable state: the server needs
 * persistence, docs/operations.md "Shared state on Redis"):
 * - `<prefix>{shipping-replay}:entries`, a hash: entry id → entry as JSON;
 * - `<prefix>{shipping-replay}:due`, a sorted set of the waiting ids scored by
 *   when they may next be taken (ms since the epoch);
 * - `<prefix>{shipping-replay}:parked`, a hash: parked id → entry as JSON.
 * The `{shipping-replay}` hash tag keeps the three in one slot, so the script
 * and the transactions below also run on a Redis Cluster.
 *
 * Every operation is one round trip: `takeDue` one script (so two instances
 * never take the same entry), the others one MULTI.
 */
import { randomUUID } from 'node:crypto';
import { KEY_PREFIX, RedisScript, type RedisConnection } from '@/lib/redis/connection';
import type { ReplayEntry, ShippingReplayQueue } from '@/lib/shared-state/shipping-replay/replay-queue';

/**
 * The waiting entry due longest ago, leased by moving its score to now + lease,
 * and its body. An id without a body (never written by this module, but cheap
 * to survive) is dropped from the set and the next one is tried.
 */
const TAKE_DUE = new RedisScript(`
while true do
  local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, 1)
  if #ids == 0 then return false end
  local body = redis.call('HGET', KEYS[2], ids[1])
  if body then
    redis.call('ZADD', KEYS[1], ARGV[2], ids[1])
    return body
  end
  redis.call('ZREM', KEYS[1], ids[1])
end
`);

function stored(entry: ReplayEntry): string {
  return JSON.stringify(entry);
}

function parsed(body: string): ReplayEntry {
  return JSON.parse(body) as ReplayEntry;
}

export class RedisShippingReplayQueue implements ShippingReplayQueue {
  private readonly entriesKey: string;
  private readonly dueKey: string;
  private readonly parkedKey: string;

  constructor(
    private readonly connection: RedisConnection,
    options: { prefix?: string } = {},
  ) {
    const base = `${options.prefix ?? KEY_PREFIX}{shipping-replay}:`;
    this.entriesKey = `${base}entries`;
    this.dueKey = `${base}due`;
    this.parkedKey = `${base}parked`;
  }

  async add(entry: Omit<ReplayEntry, 'id'>): Promise<ReplayEntry> {
    const added: ReplayEntry = { ...entry, id: randomUUID() };
    await this.write('replay_add', added);
    return added;
  }

  async takeDue(now: number, leaseMs: number): Promise<ReplayEntry | undefined> {
    const leasedUntil = now + leaseMs;
    const body = await this.connection.run('replay_take_due', (redis) =>
      TAKE_DUE.run(redis, [this.dueKey, this.entriesKey], [String(now), String(leasedUntil)]),
    );
    if (typeof body !== 'string') return undefined;
    // The score is the truth about when it may be taken again; the body is as last written.
    return { ...parsed(body), nextAttemptAt: leasedUntil };
  }

  async retryLater(entry: ReplayEntry): Promise<void> {
    await this.write('replay_retry_later', entry);
  }

  async remove(id: string): Promise<void> {
    await this.connection.run('replay_remove', (redis) => redis.multi().zRem(this.dueKey, id).hDel(this.entriesKey, id).exec());
  }

  async park(entry: ReplayEntry): Promise<void> {
    await this.connection.run('replay_park', (redis) =>
      redis
        .multi()
        .zRem(this.dueKey, entry.id)
        .hDel(this.entriesKey, entry.id)
        .hSet(this.parkedKey, entry.id, stored(entry))
        .exec(),
    );
  }

  async parked(): Promise<ReplayEntry[]> {
    const bodies = await this.connection.run('replay_parked', (redis) => redis.hVals(this.parkedKey));
    // A hash has no order: oldest first, as they were queued.
    return bodies.map(parsed).sort((a, b) => a.firstQueuedAt - b.firstQueuedAt || a.id.localeCompare(b.id));
  }

  async counts(): Promise<{ waiting: number; parked: number }> {
    const [waiting, parked] = await this.connection.run('replay_counts', (redis) =>
      redis.multi().zCard(this.dueKey).hLen(this.parkedKey).exec(),
    );
    return { waiting: Number(waiting), parked: Number(parked) };
  }

  private async write(operation: string, entry: ReplayEntry): Promise<void> {
    await this.connection.run(operation, (redis) =>
      redis
        .multi()
        .hSet(this.entriesKey, entry.id, stored(entry))
        .zAdd(this.dueKey, { score: entry.nextAttemptAt, value: entry.id })
        .exec(),
    );
  }
}
