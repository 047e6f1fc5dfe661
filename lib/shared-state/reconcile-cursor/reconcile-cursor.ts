/**
 * Where an interrupted payment reconciliation resumes: the last event it
 * finished, in the provider's newest-first order. Shared state, so the next
 * run continues where the last one stopped whichever instance it lands on.
 *
 * With REDIS_URL set it lives in Redis (lib/shared-state/reconcile-cursor/redis.ts): one
 * JSON value under one key, expiring with the reconciliation window (a cursor
 * older than the window is worthless).
 */
export interface ReconcileCursor {
  /** The id of the last event the interrupted run finished: the next run lists events after it (older ones). */
  startingAfter: string;
  /** When it was saved (ms since the epoch). */
  savedAt: number;
}

export interface ReconcileCursorStore {
  load(): Promise<ReconcileCursor | undefined>;
  /** Saves the cursor; it may be forgotten after `ttlMs`. */
  save(cursor: ReconcileCursor, ttlMs: number): Promise<void>;
  /** Forgets the cursor: the last run reached the end of the window. */
  clear(): Promise<void>;
}

/** One process's cursor: lost on restart, which costs only a full pass from the newest event. */
export class MemoryReconcileCursorStore implements ReconcileCursorStore {
  private cursor: { value: ReconcileCursor; expiresAt: number } | undefined;

  constructor(private readonly now: () => number = Date.now) {}

  async load(): Promise<ReconcileCursor | undefined> {
    if (this.cursor && this.cursor.expiresAt <= this.now()) this.cursor = undefined;
    return this.cursor ? { ...this.cursor.value } : undefined;
  }

  async save(cursor: ReconcileCursor, ttlMs: number): Promise<void> {
    this.cursor = { value: { ...cursor }, expiresAt: this.now() + ttlMs };
  }

  async clear(): Promise<void> {
    this.cursor = undefined;
  }
}
