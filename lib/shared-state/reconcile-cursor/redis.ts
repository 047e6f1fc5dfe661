/**
 * The reconciliation cursor (lib/shared-state/reconcile-cursor/reconcile-cursor.ts) in Redis, so a run
 * resumes where the last one stopped whichever instance it lands on: one key,
 * `<prefix>reconcile:cursor`, holding the cursor as JSON and expiring with the
 * reconciliation window (an older cursor is worthless). One round trip each:
 * SET PX, GET, DEL.
 */
import type { ReconcileCursor, ReconcileCursorStore } from '@/lib/shared-state/reconcile-cursor/reconcile-cursor';
import { KEY_PREFIX, type RedisConnection } from '@/lib/redis/connection';

export class RedisReconcileCursorStore implements ReconcileCursorStore {
  private readonly key: string;

  constructor(
    private readonly connection: RedisConnection,
    options: { prefix?: string } = {},
  ) {
    this.key = `${options.prefix ?? KEY_PREFIX}reconcile:cursor`;
  }

  async load(): Promise<ReconcileCursor | undefined> {
    const value = await this.connection.run('reconcile_cursor_read', (redis) => redis.get(this.key));
    if (value === null) return undefined;
    let cursor: Partial<ReconcileCursor>;
    try {
      cursor = JSON.parse(value) as Partial<ReconcileCursor>;
    } catch {
      return undefined;
    }
    const { startingAfter, savedAt } = cursor;
    // Written only by save() below; anything else is treated as no cursor (a full pass is always safe).
    if (typeof startingAfter !== 'string' || typeof savedAt !== 'number') return undefined;
    return { startingAfter, savedAt };
  }

  async save(cursor: ReconcileCursor, ttlMs: number): Promise<void> {
    const value = JSON.stringify({ startingAfter: cursor.startingAfter, savedAt: cursor.savedAt });
    await this.connection.run('reconcile_cursor_write', (redis) =>
      redis.set(this.key, value, { expiration: { type: 'PX', value: ttlMs } }),
    );
  }

  async clear(): Promise<void> {
    await this.connection.run('reconcile_cursor_clear', (redis) => redis.del(this.key));
  }
}
