/**
 * The shipment reconciliation cursor (lib/cron/shipment-cursor.ts) in Redis:
 * one key, `<prefix>reconcile:shipments:cursor`, holding the cursor as JSON and
 * expiring with the window (SET PX, GET, DEL; one round trip each).
 *
 * When Redis fails, the cursor is treated as absent (a new pass, harmless) and
 * a lost save is logged; the run itself goes on, like the payment cursor's.
 */
import { isShipmentCursor, type ShipmentCursor, type ShipmentCursorStore } from '@/lib/cron/shipment-cursor';
import { log } from '@/lib/log';
import { KEY_PREFIX, SharedStateUnavailableError, type RedisConnection } from '@/lib/redis/connection';

export class RedisShipmentCursorStore implements ShipmentCursorStore {
  private readonly key: string;

  constructor(
    private readonly connection: RedisConnection,
    options: { prefix?: string } = {},
  ) {
    this.key = `${options.prefix ?? KEY_PREFIX}reconcile:shipments:cursor`;
  }

  async load(): Promise<ShipmentCursor | undefined> {
    const value = await this.connection.run('shipment_cursor_read', (redis) => redis.get(this.key));
    if (value === null) return undefined;
    let cursor: unknown;
    try {
      cursor = JSON.parse(value);
    } catch {
      return undefined;
    }
    if (!isShipmentCursor(cursor)) return undefined;
    const { createdFrom, createdTo, page, done, savedAt } = cursor;
    return { createdFrom, createdTo, page, done, savedAt };
  }

  async save(cursor: ShipmentCursor, ttlMs: number): Promise<void> {
    const { createdFrom, createdTo, page, done, savedAt } = cursor;
    const value = JSON.stringify({ createdFrom, createdTo, page, done, savedAt });
    await this.connection.run('shipment_cursor_write', (redis) => redis.set(this.key, value, { expiration: { type: 'PX', value: ttlMs } }));
  }

  async clear(): Promise<void> {
    await this.connection.run('shipment_cursor_clear', (redis) => redis.del(this.key));
  }
}

function unavailable(error: unknown): SharedStateUnavailableError | undefined {
  return error instanceof SharedStateUnavailableError ? error : undefined;
}

export class ShipmentCursorWithFallback implements ShipmentCursorStore {
  constructor(private readonly shared: ShipmentCursorStore) {}

  async load(): Promise<ShipmentCursor | undefined> {
    try {
      return await this.shared.load();
    } catch (error) {
      const failure = unavailable(error);
      if (!failure) throw error;
      log.warn('shipping.reconcile_cursor_unreadable', { cause: failure.details?.cause ?? null, message: 'starting a new pass' });
      return undefined;
    }
  }

  async save(cursor: ShipmentCursor, ttlMs: number): Promise<void> {
    try {
      await this.shared.save(cursor, ttlMs);
    } catch (error) {
      const failure = unavailable(error);
      if (!failure) throw error;
      log.error('shipping.reconcile_cursor_not_saved', { cause: failure.details?.cause ?? null, page: cursor.page, done: cursor.done });
    }
  }

  async clear(): Promise<void> {
    try {
      await this.shared.clear();
    } catch (error) {
      const failure = unavailable(error);
      if (!failure) throw error;
      // The next run resumes from the old cursor: the rest of an old pass, then a new one.
      log.warn('shipping.reconcile_cursor_not_cleared', { cause: failure.details?.cause ?? null });
    }
  }
}
