/**
 * Every store call passes here (lib/store/woocommerce.ts): it takes a slot (lib/shared-state/store-slots.ts), waiting a
 * little for one, or fails with StoreBusyError without being sent. A call that ends hands its slot straight to a waiter
 * here, or keeps it for its request's next call. The request's scope (lib/request-scope.ts) says whose call it is.
 */
import { randomInt, randomUUID } from 'node:crypto';
import type { StoreCaller } from '@/lib/config';
import { StoreBusyError } from '@/lib/errors';
import { atMostEvery, log } from '@/lib/log';
import { currentRequest, requestScopeOf, type RequestScope } from '@/lib/request-scope';
import { LEASE_MARGIN_MS, type SlotLease, type SlotRequest, type StoreSlots } from '@/lib/shared-state/store-slots';
import { MIN_ATTEMPT_MS, requestTimeLeftMs } from '@/lib/upstream/budget';

const WAITS = {
  /** A request's first store call waits this long for a slot: a burst passes, an overload answers in milliseconds. */
  firstCallWaitMs: 100,
  /** A later call of an admitted request goes first, so it rarely waits at all. */
  followUpWaitMs: 2_000,
  /** The work between two calls of one request (a card-provider call included): past it, the kept slot goes back. */
  keepForNextCallMs: 100,
};

interface KeptSlot {
  lease: SlotLease;
  cancel(): void;
  giveBack(): void;
}

/** One refusal line per this many milliseconds at most, with the count since the last one. */
const REFUSAL_LOG_INTERVAL_MS = 10_000;

interface Waiter {
  request: SlotRequest;
  /** Ends the pause: to try again (no lease), or with a slot handed over by a call that ended. */
  wake(lease?: SlotLease): void;
}

export class StoreGate {
  private readonly waiting = new Set<Waiter>();
  private refusedSinceLog = 0;
  private readonly waits: typeof WAITS;

  constructor(
    private readonly slots: StoreSlots,
    options: Partial<typeof WAITS> = {},
  ) {
    this.waits = { ...WAITS, ...options };
  }

  get waiters(): number {
    return this.waiting.size;
  }

  /** A slot for one attempt of `operation` lasting at most `attemptMs`, or StoreBusyError. */
  async enter(operation: string, attemptMs: number) {
    // Outside a request (a script), a background call.
    const scope = currentRequest() ?? requestScopeOf({});
    const followUp = scope.notes.storeAdmitted && scope.storeCaller !== 'background';
    const request: SlotRequest = { caller: scope.storeCaller, followUp, token: randomUUID(), leaseMs: attemptMs + LEASE_MARGIN_MS };
    const kept = scope.notes.keptSlot as KeptSlot | undefined;
    if (kept) {
      scope.notes.keptSlot = undefined;
      kept.cancel();
      return this.held(kept.lease.handOver(request), request, scope);
    }
    // Never into the time the attempt itself needs: the wait counts against the request's deadline.
    const waitMs = Math.min(followUp ? this.waits.followUpWaitMs : this.waits.firstCallWaitMs, requestTimeLeftMs() - MIN_ATTEMPT_MS);
    const giveUpAt = Date.now() + waitMs;
    for (;;) {
      const lease = await this.slots.tryAcquire(request);
      if (lease) return this.held(lease, request, scope);
      const left = giveUpAt - Date.now();
      if (left <= 0) {
        if (followUp) await this.slots.stopWaiting(request.token).catch(() => undefined);
        this.refusedSinceLog += 1;
        this.logRefusals(operation, scope.storeCaller);
        throw new StoreBusyError(operation, randomInt(1, 4));
      }
      const handedOver = await this.pause(Math.min(left, pauseMs(followUp)), request);
      if (handedOver) return this.held(handedOver, request, scope);
    }
  }

  private held(lease: SlotLease, request: SlotRequest, scope: RequestScope) {
    scope.notes.storeAdmitted = true;
    let left = false;
    return {
      /** Ends the call. `timedOut`: the store may still be working on it (PHP goes on), so the lease runs to its end. */
      leave: (timedOut: boolean) => {
        if (left) return;
        left = true;
        if (!timedOut && !this.keep(lease, request, scope)) this.passOn(lease, request.caller);
      },
    };
  }

  /** A slot given back: to a waiter here when there is one, else to the semaphore. */
  private passOn(lease: SlotLease, caller: StoreCaller): void {
    const next = this.nextWaiter(caller);
    if (next) next.wake(lease.handOver(next.request));
    else void lease.release();
  }

  /**
   * Keeps the slot of a call that ended for the same request's next call, so a new request does not take it in the
   * moment between two calls. Never for the crons, never while another request's follow-up waits here (it goes
   * first), never once the request is over; the lease keeps its end, so a holder that dies loses it.
   */
  private keep(lease: SlotLease, request: SlotRequest, scope: RequestScope): boolean {
    if (this.waits.keepForNextCallMs <= 0 || scope.storeCaller === 'background' || scope.notes.ended || scope.notes.keptSlot) return false;
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
    const timer = setTimeout(kept.giveBack, this.waits.keepForNextCallMs);
    timer.unref?.();
    scope.notes.keptSlot = kept;
    return true;
  }

  /**
   * A slot given back goes to a waiting follow-up first, else to the longest-waiting new request of the same class
   * (so no class's reservation moves). Followers waiting on other instances get the next slot given back to Redis.
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

  private readonly logRefusals = atMostEvery(REFUSAL_LOG_INTERVAL_MS, (operation: string, caller: StoreCaller) => {
    log.warn('store.at_capacity', {
      refused: this.refusedSinceLog,
      operation,
      caller,
      message: 'every STORE_MAX_CONCURRENCY slot stayed taken: calls are refused without reaching the store',
    });
    this.refusedSinceLog = 0;
  });
}

/**
 * Between two tries, each a Redis round trip (a slot given back here goes straight to a waiter): a follow-up asks
 * again within 10 to 20 ms, a new request every 30 to 50 ms, jittered so instances do not ask in step.
 */
function pauseMs(followUp: boolean): number {
  return followUp ? randomInt(10, 21) : randomInt(30, 51);
}
