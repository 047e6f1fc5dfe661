/** The request deadline and the one retry of reads (lib/upstream/budget.ts). */
import { describe, expect, it } from 'vitest';
import {
  attemptTimeoutMs,
  MIN_ATTEMPT_MS,
  requestTimeLeftMs,
  RETRY_JITTER_MAX_MS,
  RETRY_JITTER_MIN_MS,
  settleWithin,
  withOneRetry,
  withRequestDeadline,
} from '@/lib/upstream/budget';

class Transient extends Error {}
class Permanent extends Error {}

function scripted(outcomes: (Error | string)[]) {
  const timeouts: number[] = [];
  const sleeps: number[] = [];
  const attempt = async (timeoutMs: number) => {
    timeouts.push(timeoutMs);
    const next = outcomes.shift();
    if (next instanceof Error) throw next;
    return next ?? 'ok';
  };
  const policy = (random = 0.5) => ({
    perAttemptMs: 1_000,
    retriable: (error: unknown) => error instanceof Transient,
    outOfTime: () => new Error('out of time'),
    sleep: async (ms: number) => {
      sleeps.push(ms);
    },
    random: () => random,
  });
  return { attempt, policy, timeouts, sleeps };
}

describe('request deadline', () => {
  it('has no limit outside a request, and counts down inside one', async () => {
    expect(requestTimeLeftMs()).toBe(Number.POSITIVE_INFINITY);
    expect(attemptTimeoutMs(700)).toBe(700);
    await withRequestDeadline(400, async () => {
      expect(requestTimeLeftMs()).toBeLessThanOrEqual(400);
      expect(attemptTimeoutMs(700)).toBeLessThanOrEqual(400);
      expect(attemptTimeoutMs(200)).toBe(200);
    });
    await withRequestDeadline(MIN_ATTEMPT_MS - 1, async () => {
      expect(attemptTimeoutMs(700)).toBe(0);
    });
  });
});

describe('one retry', () => {
  it('retries a transient failure once, after a jittered pause', async () => {
    const run = scripted([new Transient(), 'second']);
    await expect(withOneRetry(run.attempt, run.policy(0))).resolves.toBe('second');
    expect(run.timeouts).toEqual([1_000, 1_000]);
    expect(run.sleeps).toEqual([RETRY_JITTER_MIN_MS]);
    const late = scripted([new Transient(), 'second']);
    await withOneRetry(late.attempt, late.policy(0.999));
    expect(late.sleeps[0]).toBeLessThan(RETRY_JITTER_MAX_MS);
    expect(late.sleeps[0]).toBeGreaterThan(RETRY_JITTER_MIN_MS);
  });

  it('takes an attempt that throws before its promise as a failure like any other: retried when transient', async () => {
    const run = scripted(['second']);
    const throwsAtOnce = (timeoutMs: number): Promise<string> => {
      if (run.timeouts.length === 0) {
        run.timeouts.push(timeoutMs);
        throw new Transient();
      }
      return run.attempt(timeoutMs);
    };
    await expect(withOneRetry(throwsAtOnce, run.policy(0))).resolves.toBe('second');
    expect(run.sleeps).toEqual([RETRY_JITTER_MIN_MS]);
    const permanent = (): Promise<string> => {
      throw new Permanent();
    };
    await expect(withOneRetry(permanent, run.policy())).rejects.toBeInstanceOf(Permanent);
  });

  it('gives up after the second failure', async () => {
    const run = scripted([new Transient(), new Transient(), 'never']);
    await expect(withOneRetry(run.attempt, run.policy())).rejects.toBeInstanceOf(Transient);
    expect(run.timeouts).toHaveLength(2);
  });

  it('does not retry a failure that is not transient (a 4xx, or a write)', async () => {
    const run = scripted([new Permanent(), 'never']);
    await expect(withOneRetry(run.attempt, run.policy())).rejects.toBeInstanceOf(Permanent);
    expect(run.timeouts).toHaveLength(1);
  });

  it('does not retry when the request has no time for a pause and a useful attempt', async () => {
    const run = scripted([new Transient(), 'never']);
    await withRequestDeadline(MIN_ATTEMPT_MS + RETRY_JITTER_MIN_MS - 10, async () => {
      await expect(withOneRetry(run.attempt, run.policy(0))).rejects.toBeInstanceOf(Transient);
    });
    expect(run.timeouts).toHaveLength(1);
  });

  it('starts nothing when no time is left', async () => {
    const run = scripted(['never']);
    await withRequestDeadline(10, async () => {
      await expect(withOneRetry(run.attempt, run.policy())).rejects.toThrow('out of time');
    });
    expect(run.timeouts).toHaveLength(0);
  });
});

describe('settleWithin', () => {
  it('answers in time even when the work never settles', async () => {
    const never = new Promise<string>(() => undefined);
    await expect(settleWithin(never, 20, () => new Error('timed out'))).rejects.toThrow('timed out');
  });
});
