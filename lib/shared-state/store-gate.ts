/**
 * Every store call passes here (lib/store/woocommerce.ts): it takes a slot (lib/shared-state/store-slots.ts), waiting a
 * little for one, or fails with StoreBusyError without being sent. A call that ends hands its slot straight to a waiter
 * here, or keeps it for its request's next call. The request's scope (lib/request-scope.ts) says whose call it is.
 */
import { randomInt, randomUUID } from 'node:crypto';
import type { StoreCaller } from '@/lib/config';
import { StoreBusyError } from '@/lib/errors';
import { log } from '@/lib/log';
import { currentRequest, requestScopeOf, type RequestNotes } from '@/lib/request-scope';
import { LEASE_MARGIN_MS, type SlotLease, type SlotRequest, type StoreSlots } from '@/lib/shared-state/store-slots';
import { MIN_ATTEMPT_MS, requestTimeLeftMs } from '@/lib/upstream/budget';

/** How long a request's first store call waits for a slot: a burst passes, an overload answers in milliseconds. */
export const FIRST_CALL_WAIT_MS = 100;
/** How long a later call of an admitted request may wait: it goes first, so it rarely waits at all. */
export const FOLLOW_UP_WAIT_MS = 2_000;
/**
 * How long the slot of a request's call that ended stays with the request for its next call (the
 * gate's `keep`): the work between two calls of one request, a card-provider call included. Past it,
 * the slot is worth more to whoever waits than to a request that may make no further call.
 */
export const KEEP_FOR_NEXT_CALL_MS = 100;

interface KeptSlot {
  lease: SlotLease;
  /** Taken by the request's next call: the slot stays where it is. */
  cancel(): void;
  /** Passes the slot on as any call's end does (a waiter here, or back to the semaphore). */
  giveBack(): void;
}

/** Whose call it is, and what its request noted; outside a request (a script), a background call's. */
interface CallerScope {
  caller: StoreCaller;
  notes: RequestNotes;
}

function currentScope(): CallerScope {
  const request = currentRequest() ?? requestScopeOf({});
  return { caller: request.storeCaller, notes: request.notes };
}

/** One refusal line per this many milliseconds at most, with the count since the last one. */
const REFUSAL_LOG_INTERVAL_MS = 10_000;

export interface HeldSlot {
  /**
   * Ends the call. `timedOut`: the store may still be working on it (PHP goes on
   * after the client left), so the lease is kept until it expires instead of
   * letting a new call in beside it.
   */
  leave(timedOut: boolean): void;
}

export interface StoreGateOptions {
  firstCallWaitMs?: number;
  followUpWaitMs?: number;
  keepForNextCallMs?: number;
}

interface Waiter {
  request: SlotRequest;
  /** Ends the pause: to try again (no lease), or with a slot handed over by a call that ended. */
  wake(lease?: SlotLease): void;
}

export class StoreGate {
  private readonly waiting = new Set<Waiter>();
  private refusedSinceLog = 0;
  private lastRefusalLog = Number.NEGATIVE_INFINITY;
  private readonly firstCallWaitMs: number;
  private readonly followUpWaitMs: number;
  private readonly keepForNextCallMs: number;

  constructor(
    readonly slots: StoreSlots,
    options: StoreGateOptions = {},
  ) {
    this.firstCallWaitMs = options.firstCallWaitMs ?? FIRST_CALL_WAIT_MS;
    this.followUpWaitMs = options.followUpWaitMs ?? FOLLOW_UP_WAIT_MS;
    this.keepForNextCallMs = options.keepForNextCallMs ?? KEEP_FOR_NEXT_CALL_MS;
  }

  /** Calls of this instance waiting for a slot now (for tests). */
  get waiters(): number {
    return this.waiting.size;
  }

  /** A slot for one attempt of `operation` lasting at most `attemptMs`, or StoreBusyError. */
  async enter(operation: string, attemptMs: number): Promise<HeldSlot> {
    const scope = currentScope();
    const followUp = scope.notes.storeAdmitted && scope.caller !== 'background';
    const request: SlotRequest = { caller: scope.caller, followUp, token: randomUUID(), leaseMs: attemptMs + LEASE_MARGIN_MS };
    const kept = takeKept(scope);
    if (kept) return this.held(kept.lease.handOver(request), request, scope);
    // Never into the time the attempt itself needs: the wait counts against the request's deadline.
    const waitMs = Math.min(followUp ? this.followUpWaitMs : this.firstCallWaitMs, requestTimeLeftMs() - MIN_ATTEMPT_MS);
    const giveUpAt = Date.now() + waitMs;
    for (;;) {
      const lease = await this.slots.tryAcquire(request);
      if (lease) return this.held(lease, request, scope);
      const left = giveUpAt - Date.now();
      if (left <= 0) {
        if (followUp) await this.slots.stopWaiting(request.token).catch(() => undefined);
        this.noteRefusal(operation, scope.caller);
        throw new StoreBusyError(operation, randomInt(1, 4));
      }
      const handedOver = await this.pause(Math.min(left, pauseMs(followUp)), request);
      if (handedOver) return this.held(handedOver, request, scope);
    }
  }

  private held(lease: SlotLease, request: SlotRequest, scope: CallerScope): HeldSlot {
    scope.notes.storeAdmitted = true;
    let left = false;
    return {
      leave: (timedOut) => {
        if (left) return;
        left = true;
        if (timedOut) return;
        if (this.keep(lease, request, scope)) return;
        this.passOn(lease, request.caller);
      },
    };
  }

  /** A slot given back: to a waiter here when there is one, else to the semaphore. */
  private passOn(lease: SlotLease, caller: StoreCaller): void {
    const next = this.nextWaiter(caller);
    if (next) {
      this.waiting.delete(next);
      next.wake(lease.handOver(next.request));
      return;
    }
    // Not awaited: the answer is already here.
    void lease.release();
  }

  /**
   * Keeps the slot of a call that ended for the same request's next call, for
   * keepForNextCallMs at most: an admitted request's calls come one after the
   * other with a little work between them (a parse, a card-provider call), and
   * a slot given back in that moment is taken by a new request while the
   * admitted one waits for the next slot to free, the time it was admitted to
   * be spared. Never for the crons (their units are new requests), never when a
   * follow-up of another request waits here (it goes first, and it is waiting
   * already), and never once the request's work is over: its end gives the
   * slot back at once. The lease keeps its end, so a holder that dies while
   * keeping it loses it as it would mid-call.
   */
  private keep(lease: SlotLease, request: SlotRequest, scope: CallerScope): boolean {
    if (this.keepForNextCallMs <= 0 || scope.caller === 'background' || scope.notes.ended || scope.notes.keptSlot) return false;
    for (const waiter of this.waiting) if (waiter.request.followUp) return false;
    const kept: KeptSlot = {
      lease,
      cancel: () => clearTimeout(timer),
      giveBack: () => {
        if (scope.notes.keptSlot !== kept) return;
        scope.notes.keptSlot = undefined;
        clearTimeout(timer);
        this.passOn(lease, request.caller);
      },
    };
    const timer = setTimeout(kept.giveBack, this.keepForNextCallMs);
    timer.unref?.();
    scope.notes.keptSlot = kept;
    return true;
  }

  /**
   * Who gets a slot this instance gives back: a waiting follow-up first (it may take
   * any slot), else the longest-waiting new request of the same class (the count of
   * each class stays as it was, so no other class's reservation moves). A follow-up
   * waiting on another instance is not seen here; it gets the next slot given back
   * to Redis, and new requests there wait for it meanwhile.
   */
  private nextWaiter(caller: StoreCaller): Waiter | undefined {
    let sameClass: Waiter | undefined;
    for (const waiter of this.waiting) {
      if (waiter.request.followUp) return waiter;
      if (!sameClass && waiter.request.caller === caller) sameClass = waiter;
    }
    return sameClass;
  }

  private pause(ms: number, request: SlotRequest): Promise<SlotLease | undefined> {
    return new Promise((resolve) => {
      const waiter: Waiter = {
        request,
        wake: (lease) => {
          clearTimeout(timer);
          this.waiting.delete(waiter);
          resolve(lease);
        },
      };
      const timer = setTimeout(() => waiter.wake(), ms);
      this.waiting.add(waiter);
    });
  }

  private noteRefusal(operation: string, caller: StoreCaller): void {
    this.refusedSinceLog += 1;
    const now = Date.now();
    if (now - this.lastRefusalLog < REFUSAL_LOG_INTERVAL_MS) return;
    this.lastRefusalLog = now;
    log.warn('store.at_capacity', {
      refused: this.refusedSinceLog,
      operation,
      caller,
      message: 'every STORE_MAX_CONCURRENCY slot stayed taken: calls are refused without reaching the store',
    });
    this.refusedSinceLog = 0;
  }
}

/** The slot kept for this call, if any: taken by the first call that asks. */
function takeKept(scope: CallerScope): KeptSlot | undefined {
  const kept = scope.notes.keptSlot as KeptSlot | undefined;
  if (!kept) return undefined;
  scope.notes.keptSlot = undefined;
  kept.cancel();
  return kept;
}

/**
 * Between two tries. A slot this instance gives back goes straight to a waiter
 * here, so the pauses only bound how late a slot given back on another
 * instance is noticed, and each try is a Redis round trip: a follow-up asks
 * again within 10 to 20 ms (it goes first, and a freed slot is held for it only
 * while it keeps asking), a new request every 30 to 50 ms, jittered, so
 * waiters on many instances do not ask in step.
 */
function pauseMs(followUp: boolean): number {
  return followUp ? randomInt(10, 21) : randomInt(30, 51);
}
