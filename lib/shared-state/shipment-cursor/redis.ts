/**
 * The shipment reconciliation cursor (lib/shared-state/shipment-cursor/shipment-cursor.ts) in Redis:
 * one key, `<prefix>reconcile:shipments:cursor`, holding the cursor as JSON and
 * expiring with the window (SET PX, GET, DEL; one round trip each).
 *
 * When Redis fails, the cursor is treated as absent (a new pass, harmless) and
 * a lost save is logged; the run itself goes on, like the payment cursor's.
 */
import { isShipmentCursor, type ShipmentCursor, type ShipmentCursorStore } from '@/lib/shared-state/shipment-cursor/shipment-cursor';
import { CursorWithFallback } from '@/lib/shared-state/fallback';
import { KEY_PREFIX, type RedisConnection } from '@/lib/redis/connection';

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

/** ShipStation reconciliation's cursor: unreadable, a new pass over the window starts. */
export function shipmentCursorWithFallback(shared: ShipmentCursorStore): CursorWithFallback<ShipmentCursor> {
  return new CursorWithFallback(shared, {
    prefix: 'shipping.reconcile',
    unreadable: 'starting a new pass',
    position: (cursor) => ({ page: cursor.page, done: cursor.done }),
  });
}
