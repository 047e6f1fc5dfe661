/**
 * Where an interrupted reconciliation resumes (payments: after the last event done; shipments: a page of a fixed
 * window), in Redis as one JSON value under one key expiring with the window. Losing one costs only a new pass.
 */
import { z } from 'zod';
import { log } from '@/lib/log';
import { KEY_PREFIX, type RedisConnection } from '@/lib/redis/connection';
import { unlessUnavailable } from '@/lib/shared-state/fallback';

const reconcileCursor = z.object({
  /** The id of the last event the interrupted run finished: the next run lists events after it (older ones). */
  startingAfter: z.string(),
  savedAt: z.number(),
});

const shipmentCursor = z.object({
  /** The pass's window, fixed when it began, so its pages keep their contents from run to run (ISO 8601, UTC). */
  createdFrom: z.string(),
  createdTo: z.string(),
  page: z.int().min(1),
  /** How many of that page's (non-voided) shipments it finished. */
  done: z.int().min(0),
  savedAt: z.number(),
});

export type ReconcileCursor = z.infer<typeof reconcileCursor>;
export type ShipmentCursor = z.infer<typeof shipmentCursor>;

export interface CursorStore<Cursor> {
  load(): Promise<Cursor | undefined>;
  /** Saves the cursor; it may be forgotten after `ttlMs`. */
  save(cursor: Cursor, ttlMs: number): Promise<void>;
  /** Forgets the cursor: the last run reached the end of the window. */
  clear(): Promise<void>;
}

export type ShipmentCursorStore = CursorStore<ShipmentCursor>;

/** How one cursor is stored in Redis and named in the logs. */
export interface CursorKind<Cursor> {
  /** The key after the prefix, and the Redis operations' prefix (`<operation>_read`, `_write`, `_clear`). */
  key: string;
  operation: string;
  /** A stored value it refuses is no cursor (a new pass is always safe); it keeps only the cursor's own fields. */
  schema: z.ZodType<Cursor>;
  /** The log events' prefix (`<log>.cursor_unreadable`, `_not_saved`, `_not_cleared`), what an unreadable one costs. */
  log: string;
  unreadable: string;
  /** Identifiers of a cursor that could not be saved. */
  position(cursor: Cursor): Record<string, string | number>;
}

export const RECONCILE_CURSOR: CursorKind<ReconcileCursor> = {
  key: 'reconcile:cursor',
  operation: 'reconcile_cursor',
  schema: reconcileCursor,
  log: 'reconcile',
  unreadable: 'starting from the newest event of the window',
  position: (cursor) => ({ resumeAfter: cursor.startingAfter }),
};

export const SHIPMENT_CURSOR: CursorKind<ShipmentCursor> = {
  key: 'reconcile:shipments:cursor',
  operation: 'shipment_cursor',
  schema: shipmentCursor,
  log: 'shipping.reconcile',
  unreadable: 'starting a new pass',
  position: (cursor) => ({ page: cursor.page, done: cursor.done }),
};

/** One process's cursor: lost on restart, which costs only a new pass. */
export class MemoryCursorStore<Cursor extends object> implements CursorStore<Cursor> {
  private cursor: { value: Cursor; expiresAt: number } | undefined;

  constructor(private readonly now: () => number = Date.now) {}

  async load(): Promise<Cursor | undefined> {
    if (this.cursor && this.cursor.expiresAt <= this.now()) this.cursor = undefined;
    return this.cursor ? { ...this.cursor.value } : undefined;
  }

  async save(cursor: Cursor, ttlMs: number): Promise<void> {
    this.cursor = { value: { ...cursor }, expiresAt: this.now() + ttlMs };
  }

  async clear(): Promise<void> {
    this.cursor = undefined;
  }
}

/**
 * The cursor under `<prefix><kind.key>`: SET PX, GET, DEL, one round trip each. An outage costs only a pass: an
 * unreadable cursor means a new pass (applying an event or a shipment twice changes nothing), an unsaved one is
 * logged and costs the next run that pass again, an uncleared one the rest of an old pass.
 */
export class RedisCursorStore<Cursor> implements CursorStore<Cursor> {
  private readonly key: string;

  constructor(
    private readonly connection: RedisConnection,
    private readonly kind: CursorKind<Cursor>,
    prefix = KEY_PREFIX,
  ) {
    this.key = `${prefix}${kind.key}`;
  }

  async load(): Promise<Cursor | undefined> {
    const value = await unlessUnavailable(
      () => this.connection.run(`${this.kind.operation}_read`, (redis) => redis.get(this.key)),
      (error) => void log.warn(`${this.kind.log}.cursor_unreadable`, { cause: error.details?.cause, message: this.kind.unreadable }),
    );
    if (typeof value !== 'string') return undefined;
    try {
      return this.kind.schema.safeParse(JSON.parse(value)).data;
    } catch {
      return undefined;
    }
  }

  async save(cursor: Cursor, ttlMs: number): Promise<void> {
    const value = JSON.stringify(cursor);
    const expiration = { type: 'PX', value: ttlMs } as const;
    await unlessUnavailable<unknown>(
      () => this.connection.run(`${this.kind.operation}_write`, (redis) => redis.set(this.key, value, { expiration })),
      (error) => log.error(`${this.kind.log}.cursor_not_saved`, { cause: error.details?.cause, ...this.kind.position(cursor) }),
    );
  }

  async clear(): Promise<void> {
    await unlessUnavailable<unknown>(
      () => this.connection.run(`${this.kind.operation}_clear`, (redis) => redis.del(this.key)),
      (error) => log.warn(`${this.kind.log}.cursor_not_cleared`, { cause: error.details?.cause }),
    );
  }
}
