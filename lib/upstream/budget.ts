/**
 * Time allowed for upstream calls (docs/decisions.md#d34): every call made while serving a request, retries included,
 * ends by the request's deadline (carried by the request scope); outside a request only the per-attempt timeout applies.
 */
import { currentRequest, inRequestScope, requestScopeOf } from '@/lib/request-scope';

/** A request may spend this many UPSTREAM_TIMEOUT_MS on upstream calls in all. */
export const REQUEST_BUDGET_TIMEOUTS = 3;
/** An attempt with less time than this left is not started: it could only time out. */
export const MIN_ATTEMPT_MS = 100;
/** The pause before the one retry of a read: random in [MIN, MAX), so instances do not retry in step. */
export const RETRY_JITTER_MIN_MS = 50;
export const RETRY_JITTER_MAX_MS = 250;

/** Runs `work` with a deadline `budgetMs` from now, inside the current request if any (a cron unit's own deadline). */
export function withRequestDeadline<T>(budgetMs: number, work: () => Promise<T>): Promise<T> {
  const current = currentRequest();
  const endsAt = Date.now() + budgetMs;
  return inRequestScope(current ? { ...current, endsAt } : requestScopeOf({}, endsAt), work);
}

/** Milliseconds left in the current request, or Infinity outside one. */
export function requestTimeLeftMs(now = Date.now()): number {
  return (currentRequest()?.endsAt ?? Infinity) - now;
}

/** The timeout of the next attempt: the per-attempt limit, cut to what the request has left (0: do not start). */
export function attemptTimeoutMs(perAttemptMs: number, now = Date.now()): number {
  const allowed = Math.floor(Math.min(perAttemptMs, requestTimeLeftMs(now)));
  return allowed >= MIN_ATTEMPT_MS ? allowed : 0;
}

export interface RetryPolicy {
  perAttemptMs: number;
  /** Whether a failure may be retried: a network error, a timeout or a 5xx of a read (or an idempotent write). */
  retriable: (error: unknown) => boolean;
  /** The error to throw when no attempt can start for lack of time. */
  outOfTime: () => Error;
  /** The pause before the retry, a jitter by default; 0 when the retry waits by itself (ShipStation's rate budget). */
  pauseMs?: (error: unknown) => number | undefined;
  sleep?: (ms: number) => Promise<void>;
  random?: () => number;
}

const defaultSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Runs `attempt` once, and once more after a jittered pause when it failed in
 * a retriable way and the request still has time for a whole new attempt.
 */
export function withOneRetry<T>(attempt: (timeoutMs: number) => Promise<T>, policy: RetryPolicy): Promise<T> {
  const first = attemptTimeoutMs(policy.perAttemptMs);
  // A plain chain, not an async function: one promise less on every upstream call.
  let attempted: Promise<T>;
  try {
    attempted = first === 0 ? Promise.reject(policy.outOfTime()) : attempt(first);
  } catch (error) {
    attempted = Promise.reject(error);
  }
  return attempted.catch(async (error: unknown) => {
    if (first === 0 || !policy.retriable(error)) throw error;
    const random = policy.random ?? Math.random;
    const pause = policy.pauseMs?.(error) ?? RETRY_JITTER_MIN_MS + Math.floor(random() * (RETRY_JITTER_MAX_MS - RETRY_JITTER_MIN_MS));
    if (requestTimeLeftMs() - pause < MIN_ATTEMPT_MS) throw error;
    if (pause > 0) await (policy.sleep ?? defaultSleep)(pause);
    const second = attemptTimeoutMs(policy.perAttemptMs);
    if (second === 0) throw error;
    return attempt(second);
  });
}

/**
 * Bounds a promise by `ms` whatever the library under it does (an SDK's own
 * retry of a closed connection, a socket that only idles): the caller gets
 * `onTimeout()` in time, and the abandoned work is left to finish or fail alone.
 */
export function settleWithin<T>(work: Promise<T>, ms: number, onTimeout: () => Error): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(onTimeout()), ms);
    work.then(resolve, reject).finally(() => clearTimeout(timer));
  });
}

/** `work`'s outcome, or `onTimeout` when `ms` pass first. */
export function orTimeout<T, U>(work: Promise<T>, ms: number, onTimeout: U): Promise<T | U> {
  return new Promise<T | U>((resolve, reject) => {
    const timer = setTimeout(() => resolve(onTimeout), Math.max(0, ms));
    work.then(resolve, reject).finally(() => clearTimeout(timer));
  });
}
