/**
 * What the service does when Redis fails (docs/operations.md, "When Redis is down"):
 * each piece's wrapper (lib/shared-state/<piece>/fallback.ts) puts a shared
 * implementation in front of an in-process one and uses the in-process one
 * whenever the shared one answers SharedStateUnavailableError, logging a
 * warning at most once a minute; this file holds what they share.
 * lib/services.ts decides which state may fall back (rate limits, checkout
 * and shipping locks, the shipping memories, the shipping replay queue's
 * writes, the reconciliation cursor) and which may not (the card webhook's
 * locks and processed events: Stripe retries instead; the replay cron's reads
 * of the queue: the run fails rather than report an empty queue).
 */
import { SharedStateUnavailableError, type SafeDetails } from '@/lib/errors';
import { log } from '@/lib/log';

const WARNING_INTERVAL_MS = 60_000;

/** One warning a minute at most, whatever part fell back and however many requests did. */
export class FallbackWarning {
  private last = Number.NEGATIVE_INFINITY;

  constructor(private readonly now: () => number = Date.now) {}

  note(part: string, error: SharedStateUnavailableError): void {
    const now = this.now();
    if (now - this.last < WARNING_INTERVAL_MS) return;
    this.last = now;
    log.warn('redis.fallback_to_memory', {
      part,
      operation: error.details?.operation ?? null,
      cause: error.details?.cause,
      message: 'Redis is unavailable: this instance keeps this state in its own memory until Redis answers again',
    });
  }
}

/** The shared answer, or the in-process one when the shared state is unavailable (with the warning). */
export async function eitherOf<T>(
  part: string,
  warning: FallbackWarning,
  shared: () => Promise<T>,
  local: () => Promise<T>,
): Promise<T> {
  try {
    return await shared();
  } catch (error) {
    if (!(error instanceof SharedStateUnavailableError)) throw error;
    warning.note(part, error);
    return local();
  }
}

/**
 * `shared` whose every method answers with `local`'s when Redis is unavailable (with the warning). A method
 * named in `bothFirstLocal` runs on `local` first, then on `shared`, whose unavailability is then ignored:
 * what this instance must remember whatever Redis does (a lock's release, a waiter leaving).
 */
export function withFallback<T extends object>(
  part: string,
  warning: FallbackWarning,
  shared: T,
  local: T,
  bothFirstLocal: readonly (keyof T)[] = [],
): T {
  const methods = new Map<PropertyKey, (...args: unknown[]) => unknown>();
  return new Proxy(shared, {
    get(target, name) {
      const member = Reflect.get(target, name, target) as unknown;
      if (typeof member !== 'function') return member;
      let method = methods.get(name);
      if (!method) {
        const onLocal = (args: unknown[]) => (Reflect.get(local, name, local) as (...a: unknown[]) => Promise<unknown>).apply(local, args);
        const onShared = (args: unknown[]) => (member as (...a: unknown[]) => Promise<unknown>).apply(target, args);
        method = bothFirstLocal.includes(name as keyof T)
          ? async (...args) => {
              const answer = await onLocal(args);
              await eitherOf(part, warning, () => onShared(args), async () => undefined);
              return answer;
            }
          : (...args) => eitherOf(part, warning, () => onShared(args), () => onLocal(args));
        methods.set(name, method);
      }
      return method;
    },
  });
}

export function unavailable(error: unknown): SharedStateUnavailableError | undefined {
  return error instanceof SharedStateUnavailableError ? error : undefined;
}

/** Where a cron run resumes: a reconciliation cursor, read, saved with a lifetime, and cleared. */
export interface CursorStore<Cursor> {
  load(): Promise<Cursor | undefined>;
  save(cursor: Cursor, ttlMs: number): Promise<void>;
  clear(): Promise<void>;
}

/** How one run names its cursor in the logs, and what of a cursor a failed save reports. */
export interface CursorLogging<Cursor> {
  /** The log events' prefix: `<prefix>.cursor_unreadable`, `_not_saved`, `_not_cleared`. */
  prefix: string;
  /** What an unreadable cursor costs the run (the `message` of the unreadable line). */
  unreadable: string;
  /** Identifiers of the cursor that could not be saved. */
  position(cursor: Cursor): SafeDetails;
}

/**
 * A cron run's cursor in Redis; when Redis fails the cursor is only an
 * optimisation: an unreadable one means a new pass (safe: applying an event or
 * a shipment twice changes nothing, the receipts and the status gate see to
 * it), an unsaved one is logged and costs the next run that same pass, an
 * uncleared one the rest of an old pass before a new one.
 */
export class CursorWithFallback<Cursor> implements CursorStore<Cursor> {
  constructor(
    private readonly shared: CursorStore<Cursor>,
    private readonly logging: CursorLogging<Cursor>,
  ) {}

  async load(): Promise<Cursor | undefined> {
    try {
      return await this.shared.load();
    } catch (error) {
      const failure = unavailable(error);
      if (!failure) throw error;
      log.warn(`${this.logging.prefix}.cursor_unreadable`, { cause: failure.details?.cause, message: this.logging.unreadable });
      return undefined;
    }
  }

  async save(cursor: Cursor, ttlMs: number): Promise<void> {
    try {
      await this.shared.save(cursor, ttlMs);
    } catch (error) {
      const failure = unavailable(error);
      if (!failure) throw error;
      log.error(`${this.logging.prefix}.cursor_not_saved`, { cause: failure.details?.cause, ...this.logging.position(cursor) });
    }
  }

  async clear(): Promise<void> {
    try {
      await this.shared.clear();
    } catch (error) {
      const failure = unavailable(error);
      if (!failure) throw error;
      log.warn(`${this.logging.prefix}.cursor_not_cleared`, { cause: failure.details?.cause });
    }
  }
}
