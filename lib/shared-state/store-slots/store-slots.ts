/**
 * Store shielding: at most STORE_MAX_CONCURRENCY calls to WooCommerce at once,
 * across every instance of the service. A serverless deployment scales out
 * without limit and a PHP host does not: past its workers, requests queue,
 * every call slows, timeouts fire and the retries add load. A call that cannot
 * get a slot within a short wait is not sent; it fails as StoreBusyError, which
 * each caller answers in its own way (checkout 503 with Retry-After, card
 * webhook 400 so Stripe redelivers, shipping webhook queued for the replay,
 * crons stop their run and continue next time).
 *
 * The slots are leases: each lives as long as one attempt may (its timeout plus
 * a margin) and ends by itself when its holder dies mid-call. The in-process
 * implementation below serves one instance; lib/shared-state/store-slots/redis.ts holds the
 * same semaphore in Redis for all of them, and lib/services.ts chooses.
 *
 * How the slots are shared (docs/operations.md, "Store shielding"):
 * - Each class of caller may be guaranteed some slots (STORE_RESERVED_SLOTS):
 *   by default half for checkout, a quarter for the webhooks, the rest shared.
 *   A new request of one class never takes the last free slots another class
 *   is guaranteed and not using, so a redelivery storm cannot lock customers
 *   out, and a flash sale cannot keep payments from being recorded. The crons
 *   have no guarantee: they are the work that can wait.
 * - A request that already made a store call (it was admitted) goes first for
 *   its later calls: they ignore the split, wait longer, and while one waits no
 *   new request of any class is admitted. Refusing the second call of a
 *   checkout after its first one reached the store would waste the store's
 *   work and the customer's, so the split decides who gets in and whoever got
 *   in finishes. The crons' calls are always new requests: a cron unit refused
 *   halfway is simply done again by the next run.
 * - The slot of an admitted request's call that ended stays with the request
 *   for its next call, KEEP_FOR_NEXT_CALL_MS at most, and goes back as soon as
 *   the request's work is over. Given back between two calls, it went to a new
 *   request while the admitted one waited for its own next slot: the wait it
 *   was admitted to be spared (at 4 × the store's capacity it was the bulk of
 *   an admitted request's extra time). A slot kept counts as in use, and its
 *   lease keeps its end, so a holder that dies meanwhile loses it as it would
 *   mid-call.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { randomInt, randomUUID } from 'node:crypto';
import { type ReservingCaller, type SlotSplit, type StoreCaller } from '@/lib/config';
import { StoreBusyError } from '@/lib/errors';
import { log } from '@/lib/log';
import { MIN_ATTEMPT_MS, requestTimeLeftMs } from '@/lib/upstream/budget';

export interface SlotRequest {
  caller: StoreCaller;
  /** A later call of an admitted request: ignores the split, and new requests wait while it waits. */
  followUp: boolean;
  /** Names the lease (and the waiting follow-up). */
  token: string;
  /** How long the lease lives unless released: one attempt's timeout plus LEASE_MARGIN_MS. */
  leaseMs: number;
}

export interface SlotUsage {
  limit: number;
  reserved: Record<ReservingCaller, number>;
  inUse: Record<StoreCaller, number>;
  /** Later calls of admitted requests waiting for a slot. */
  waiting: number;
  /** Where the count is kept: Redis (every instance), or this instance alone (no Redis, or Redis down). */
  scope: 'all_instances' | 'this_instance';
}

export interface SlotLease {
  /** Gives the slot back; never throws (a lease that cannot be given back expires). */
  release(): Promise<void>;
  /**
   * Passes the slot straight to another call of this instance, as that call's own
   * lease: the count never drops, so no other caller can take the slot in between,
   * and the next call starts at once instead of after two round trips. The
   * bookkeeping (the lease's name and end) follows without being awaited.
   */
  handOver(next: SlotRequest): SlotLease;
}

export interface StoreSlots {
  /**
   * Takes a slot when the split allows it, else answers undefined at once. A refused
   * follow-up is counted as waiting for WAITER_TTL_MS (each try renews it), so new
   * requests leave the next free slot to it.
   */
  tryAcquire(request: SlotRequest): Promise<SlotLease | undefined>;
  /** A waiting follow-up that gave up. */
  stopWaiting(token: string): Promise<void>;
  usage(): Promise<SlotUsage>;
}

/** A lease outlives its attempt's timeout by this much, the time to notice a dead holder aside. */
export const LEASE_MARGIN_MS = 2_000;
/** A waiting follow-up that stops asking (its instance died) stops holding new requests back after this. */
export const WAITER_TTL_MS = 200;
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

/**
 * Whether `request` may take a slot now. The one rule of both implementations
 * (lib/shared-state/store-slots/redis.ts runs the same in Lua).
 */
export function admits(split: SlotSplit, inUse: Record<StoreCaller, number>, waiting: number, request: Pick<SlotRequest, 'caller' | 'followUp'>): boolean {
  const total = inUse.checkout + inUse.webhook + inUse.background;
  if (request.followUp) return total < split.limit;
  let heldBack = waiting;
  if (request.caller !== 'checkout') heldBack += Math.max(0, split.reserved.checkout - inUse.checkout);
  if (request.caller !== 'webhook') heldBack += Math.max(0, split.reserved.webhook - inUse.webhook);
  return total + 1 + heldBack <= split.limit;
}

/** This instance's slots: the semaphore without Redis, and the fallback when Redis is down (lib/shared-state/fallback.ts). */
export class MemoryStoreSlots implements StoreSlots {
  private readonly leases = new Map<string, { caller: StoreCaller; expiresAt: number }>();
  private readonly waiters = new Map<string, number>();

  constructor(
    private readonly split: SlotSplit,
    private readonly now: () => number = Date.now,
  ) {}

  async tryAcquire(request: SlotRequest): Promise<SlotLease | undefined> {
    const now = this.now();
    this.prune(now);
    if (!admits(this.split, this.countInUse(), this.waiters.size, request)) {
      if (request.followUp) this.waiters.set(request.token, now + WAITER_TTL_MS);
      return undefined;
    }
    return this.lease(request, now);
  }

  private lease(request: SlotRequest, now: number): SlotLease {
    this.waiters.delete(request.token);
    this.leases.set(request.token, { caller: request.caller, expiresAt: now + request.leaseMs });
    return {
      release: async () => {
        this.leases.delete(request.token);
      },
      handOver: (next) => {
        this.leases.delete(request.token);
        return this.lease(next, this.now());
      },
    };
  }

  async stopWaiting(token: string): Promise<void> {
    this.waiters.delete(token);
  }

  async usage(): Promise<SlotUsage> {
    this.prune(this.now());
    return { limit: this.split.limit, reserved: { ...this.split.reserved }, inUse: this.countInUse(), waiting: this.waiters.size, scope: 'this_instance' };
  }

  private prune(now: number): void {
    for (const [token, lease] of this.leases) if (lease.expiresAt <= now) this.leases.delete(token);
    for (const [token, until] of this.waiters) if (until <= now) this.waiters.delete(token);
  }

  private countInUse(): Record<StoreCaller, number> {
    const inUse = { checkout: 0, webhook: 0, background: 0 };
    for (const { caller } of this.leases.values()) inUse[caller] += 1;
    return inUse;
  }
}

// ---------------------------------------------------------------- who is calling

interface CallerScope {
  caller: StoreCaller;
  /** Set once one of the request's store calls got a slot. */
  admitted: boolean;
  /** The slot of the request's last call, kept for its next one (StoreGate.keep). */
  kept?: KeptSlot;
  /** Set when the request's work is over: nothing is kept for a call that will not come. */
  ended: boolean;
}

interface KeptSlot {
  lease: SlotLease;
  /** Taken by the request's next call: the slot stays where it is. */
  cancel(): void;
  /** Passes the slot on as any call's end does (a waiter here, or back to the semaphore). */
  giveBack(): void;
}

const scopes = new AsyncLocalStorage<CallerScope>();

/** Runs a request's work as `caller`'s (lib/routes/family.ts: checkout, webhook, background). */
export function withStoreCaller<T>(caller: StoreCaller, work: () => Promise<T>): Promise<T> {
  const scope: CallerScope = { caller, admitted: false, ended: false };
  return scopes.run(scope, async () => {
    try {
      return await work();
    } finally {
      // The request is over: a slot kept for its next call goes back at once.
      scope.ended = true;
      scope.kept?.giveBack();
    }
  });
}

/** Outside a request (a script), calls count as background work. */
function currentScope(): CallerScope {
  return scopes.getStore() ?? { caller: 'background', admitted: false, ended: false };
}

// ---------------------------------------------------------------- waiting for a slot

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

/**
 * Every store call passes here (lib/store/woocommerce.ts): it takes a slot,
 * waiting a little for one, or fails with StoreBusyError without being sent.
 * Between tries a waiter sleeps a few milliseconds; a call of this instance
 * that ends hands its slot straight to a waiter here when there is one.
 */
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
    const followUp = scope.admitted && scope.caller !== 'background';
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
    scope.admitted = true;
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
    if (this.keepForNextCallMs <= 0 || scope.caller === 'background' || scope.ended || scope.kept) return false;
    for (const waiter of this.waiting) if (waiter.request.followUp) return false;
    const kept: KeptSlot = {
      lease,
      cancel: () => clearTimeout(timer),
      giveBack: () => {
        if (scope.kept !== kept) return;
        scope.kept = undefined;
        clearTimeout(timer);
        this.passOn(lease, request.caller);
      },
    };
    const timer = setTimeout(kept.giveBack, this.keepForNextCallMs);
    timer.unref?.();
    scope.kept = kept;
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
  const kept = scope.kept;
  if (!kept) return undefined;
  scope.kept = undefined;
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
