/**
 * Where an interrupted shipment reconciliation resumes: the pass's fixed
 * window of ShipStation shipments, the page it was reading and how many of
 * that page's shipments it finished. Shared state, so the next run continues
 * where the last one stopped whichever instance it lands on.
 *
 * With REDIS_URL set it lives in Redis (lib/shared-state/shipment-cursor/redis.ts), expiring
 * with the reconciliation window. Losing it (a flush, a restart without Redis)
 * costs only a new pass from the start of the window: applying a shipment
 * again is a no-op at the order's status gate.
 */
export interface ShipmentCursor {
  /** The pass's window, fixed when it began, so its pages keep their contents from run to run (ISO 8601, UTC). */
  createdFrom: string;
  createdTo: string;
  /** The page the interrupted run was on. */
  page: number;
  /** How many of that page's (non-voided) shipments it finished. */
  done: number;
  /** When it was saved (ms since the epoch). */
  savedAt: number;
}

export interface ShipmentCursorStore {
  load(): Promise<ShipmentCursor | undefined>;
  /** Saves the cursor; it may be forgotten after `ttlMs`. */
  save(cursor: ShipmentCursor, ttlMs: number): Promise<void>;
  /** Forgets the cursor: the last run reached the end of the window. */
  clear(): Promise<void>;
}

/** Whether a stored value is a cursor save() wrote; anything else counts as none (a new pass is always safe). */
export function isShipmentCursor(value: unknown): value is ShipmentCursor {
  if (typeof value !== 'object' || value === null) return false;
  const c = value as Record<string, unknown>;
  return (
    typeof c.createdFrom === 'string' &&
    typeof c.createdTo === 'string' &&
    Number.isSafeInteger(c.page) &&
    (c.page as number) >= 1 &&
    Number.isSafeInteger(c.done) &&
    (c.done as number) >= 0 &&
    typeof c.savedAt === 'number'
  );
}

/** One process's cursor: lost on restart, which costs only a new pass. */
export class MemoryShipmentCursorStore implements ShipmentCursorStore {
  private cursor: { value: ShipmentCursor; expiresAt: number } | undefined;

  constructor(private readonly now: () => number = Date.now) {}

  async load(): Promise<ShipmentCursor | undefined> {
    if (this.cursor && this.cursor.expiresAt <= this.now()) this.cursor = undefined;
    return this.cursor ? { ...this.cursor.value } : undefined;
  }

  async save(cursor: ShipmentCursor, ttlMs: number): Promise<void> {
    this.cursor = { value: { ...cursor }, expiresAt: this.now() + ttlMs };
  }

  async clear(): Promise<void> {
    this.cursor = undefined;
  }
}
