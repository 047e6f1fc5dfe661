/**
 * A request's hit on its endpoint's rate limit, counted by the request's first
 * Redis script instead of a round trip of its own (docs/operations.md, "Round trips per
 * request").
 *
 * The route wrapper still takes the hit first (docs/contract.md#spec-8: the limit comes before
 * origin, body and token), but with Redis it only notes it here. The first
 * Redis script of the request (the order's lock, or the event check) counts it
 * in the same round trip and throws RateLimitedError when it is over. What the
 * request does before that script is CPU only (origin, body, token or
 * signature): checkout and the card webhook reach the store and Stripe only
 * under the order's lock (or, for an event whose order takes a Stripe call to
 * find, after the event check that carries the hit), and the shipping webhook
 * settles the hit (`settlePendingRateLimit`) before it calls ShipStation. A
 * use case that calls an upstream before its first script must do the same.
 * A request that ends, or fails, without any
 * script counts its hit alone on the way out, and a 429 then replaces the
 * error it had: the answers and their precedence stay the spec's.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { RateLimitedError } from '@/lib/errors';
import type { RateLimitDecision, RateLimitRule } from '@/lib/shared-state/rate-limit/types';

export interface PendingHitCounters {
  /** Counts the hit by itself (the shared limiter, or this instance's when Redis fails). */
  alone(): Promise<RateLimitDecision>;
  /** Counts the hit in this instance's memory: the script that carried it failed before counting it. */
  locally(): Promise<RateLimitDecision>;
}

/** What a script that carries the hit does with it. */
export interface ClaimedHit {
  readonly rule: RateLimitRule;
  readonly client: string;
  /** The script counted it: throws RateLimitedError when over the limit. */
  decided(decision: RateLimitDecision): void;
  /** The script failed before it could count it: counted in this instance's memory instead (may throw RateLimitedError). */
  fellBack(): Promise<void>;
}

export class PendingRateLimitHit {
  private decision: Promise<RateLimitDecision> | undefined;
  private resolveDecision!: (decision: RateLimitDecision) => void;
  private rejectDecision!: (error: unknown) => void;

  constructor(
    readonly rule: RateLimitRule,
    readonly client: string,
    private readonly counters: PendingHitCounters,
  ) {}

  /** For a script about to run: the hit to carry, or undefined when it is counted (or being counted) already. */
  claim(): ClaimedHit | undefined {
    if (this.decision) return undefined;
    this.decision = new Promise<RateLimitDecision>((resolve, reject) => {
      this.resolveDecision = resolve;
      this.rejectDecision = reject;
    });
    // A claimer that throws leaves the rejection here too; settle() reports it, nobody else need listen.
    this.decision.catch(() => undefined);
    return {
      rule: this.rule,
      client: this.client,
      decided: (decision) => {
        this.resolveDecision(decision);
        if (!decision.allowed) throw new RateLimitedError(decision);
      },
      fellBack: async () => {
        let decision: RateLimitDecision;
        try {
          decision = await this.counters.locally();
        } catch (error) {
          this.rejectDecision(error);
          throw error;
        }
        this.resolveDecision(decision);
        if (!decision.allowed) throw new RateLimitedError(decision);
      },
    };
  }

  /** Counts the hit unless a script did; RateLimitedError when it is over the limit. */
  async settle(): Promise<void> {
    if (!this.decision) {
      this.decision = this.counters.alone();
    }
    const decision = await this.decision;
    if (!decision.allowed) throw new RateLimitedError(decision);
  }
}

const scopes = new AsyncLocalStorage<{ hit?: PendingRateLimitHit }>();

/** Runs a request with a place for its pending hit (the route wrapper). */
export function withRateLimitScope<T>(run: () => Promise<T>): Promise<T> {
  return scopes.run({}, run);
}

/** Notes the request's hit; false outside a request's scope (the caller then counts it at once). */
export function deferRateLimitHit(hit: PendingRateLimitHit): boolean {
  const scope = scopes.getStore();
  if (!scope) return false;
  scope.hit = hit;
  return true;
}

/** The current request's hit for a script to carry, if it is not counted yet. */
export function claimPendingRateLimit(): ClaimedHit | undefined {
  return scopes.getStore()?.hit?.claim();
}

/** Counts the current request's hit if nothing has; RateLimitedError when over. Cheap when there is none. */
export async function settlePendingRateLimit(): Promise<void> {
  await scopes.getStore()?.hit?.settle();
}
