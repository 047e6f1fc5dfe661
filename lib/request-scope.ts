/**
 * A request's one AsyncLocalStorage, opened once by lib/routes/families.ts: its id and route (the log lines), its upstream
 * deadline (lib/upstream/budget.ts), whose store slots its calls take (lib/shared-state/store-slots.ts) and its
 * rate-limit hit until a Redis script counts it (lib/shared-state/rate-limit.ts).
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { StoreCaller } from '@/lib/config';
import { RateLimitedError } from '@/lib/errors';

export interface RequestScope {
  readonly requestId?: string;
  readonly route?: string;
  /** Epoch milliseconds by which every upstream call of the request ends; Infinity when none is set. */
  readonly endsAt: number;
  readonly storeCaller: StoreCaller;
  /** What the request's pieces note as it goes: one object however many deadlines nest inside it. */
  readonly notes: RequestNotes;
}

export interface RequestNotes {
  storeAdmitted: boolean;
  /** The request's work is over: nothing is kept for a call that will not come. */
  ended: boolean;
  keptSlot?: { giveBack(): void };
  rateLimitHit?: { countUnlessCounted(): Promise<void> };
}

const storage = new AsyncLocalStorage<RequestScope>();

export function currentRequest(): RequestScope | undefined {
  return storage.getStore();
}

/** Outside a request (a script, a unit test), calls count as background work with no deadline. */
export function requestScopeOf(fields: Partial<Pick<RequestScope, 'requestId' | 'route' | 'storeCaller'>>, endsAt = Infinity) {
  const scope: RequestScope = { storeCaller: 'background', ...fields, endsAt, notes: { storeAdmitted: false, ended: false } };
  return scope;
}

/** Runs `work` in `scope`, which stays open for what follows it (the request's log line). */
export function inRequestScope<T>(scope: RequestScope, work: () => T): T {
  return storage.run(scope, work);
}

/**
 * Runs the request's own work, then counts its rate-limit hit if no Redis script did: over the limit the answer is
 * 429 whatever the work answered (docs/contract.md#spec-8). A slot kept for a next store call goes back at the end.
 */
export async function runRequestWork<T>(notes: RequestNotes, work: () => Promise<T>): Promise<T> {
  try {
    const result = await work();
    await notes.rateLimitHit?.countUnlessCounted();
    return result;
  } catch (error) {
    await notes.rateLimitHit?.countUnlessCounted().catch((countError: unknown) => {
      if (countError instanceof RateLimitedError) throw countError;
    });
    throw error;
  } finally {
    notes.ended = true;
    notes.keptSlot?.giveBack();
  }
}

/** Counts the current request's deferred rate-limit hit now, before an upstream call; RateLimitedError when over. */
export function countRateLimitHitNow(): Promise<void> | undefined {
  return storage.getStore()?.notes.rateLimitHit?.countUnlessCounted();
}

/** Runs `work` as `caller`'s, with fresh notes (a test's or a script's stand-in for a request of that family). */
export function withStoreCaller<T>(storeCaller: StoreCaller, work: () => Promise<T>): Promise<T> {
  const scope = { ...(storage.getStore() ?? requestScopeOf({})), storeCaller, notes: requestScopeOf({}).notes };
  return storage.run(scope, () => runRequestWork(scope.notes, work));
}
