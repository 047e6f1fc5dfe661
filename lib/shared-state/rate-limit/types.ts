/** A rule and its answer, apart so the limiter and the deferred hit (pending.ts) share them without an import circle. */
import type { RateLimitState } from '@/lib/errors';

export interface RateLimitRule {
  /** Counter name; each endpoint has its own. */
  name: string;
  limit: number;
  windowMs: number;
}

export interface RateLimitDecision extends RateLimitState {
  allowed: boolean;
}
