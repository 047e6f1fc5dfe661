/** withFallback: a piece's Redis implementation answered by this instance's memory while Redis is unavailable, and only then. */
import { describe, expect, it } from 'vitest';
import { SharedStateUnavailableError } from '@/lib/errors';
import { FallbackWarning, withFallback } from '@/lib/shared-state/fallback';
import { loggedLines } from '../support/setup';

interface Counter {
  readonly name: string;
  add(n: number): Promise<number>;
  forget(): Promise<string>;
}

/** A counter that records its calls, and fails with `failure` while one is set. */
function counter(name: string, calls: string[]) {
  const state = { failure: undefined as Error | undefined };
  const piece: Counter = {
    name,
    async add(n) {
      calls.push(`${name}.add(${n})`);
      if (state.failure) throw state.failure;
      return name === 'shared' ? n * 10 : n;
    },
    async forget() {
      calls.push(`${name}.forget`);
      if (state.failure) throw state.failure;
      return name;
    },
  };
  return { piece, state };
}

const fallbackWarnings = () => loggedLines().filter((line) => line.event === 'redis.fallback_to_memory');

function pair(bothFirstLocal: (keyof Counter)[] = []) {
  const calls: string[] = [];
  const shared = counter('shared', calls);
  const local = counter('local', calls);
  const either = withFallback('counter', new FallbackWarning(), shared.piece, local.piece, bothFirstLocal);
  return { calls, shared: shared.state, local: local.state, either };
}

describe('withFallback', () => {
  it('answers from the shared implementation alone while it answers', async () => {
    const { calls, either } = pair();
    expect(await either.add(2)).toBe(20);
    expect(calls).toEqual(['shared.add(2)']);
    expect(fallbackWarnings()).toEqual([]);
  });

  it('falls back to the local implementation on SharedStateUnavailableError, with the warning', async () => {
    const { calls, shared, either } = pair();
    shared.failure = new SharedStateUnavailableError('counter_add');
    expect(await either.add(3)).toBe(3);
    expect(calls).toEqual(['shared.add(3)', 'local.add(3)']);
    expect(fallbackWarnings()).toEqual([expect.objectContaining({ level: 'warn', part: 'counter', operation: 'counter_add' })]);
  });

  it('lets any other failure through, without asking the local implementation', async () => {
    const { calls, shared, either } = pair();
    shared.failure = new Error('a bug');
    await expect(either.add(4)).rejects.toThrow('a bug');
    expect(calls).toEqual(['shared.add(4)']);
    expect(fallbackWarnings()).toEqual([]);
  });

  it('runs a bothFirstLocal method on the local implementation first and answers with its answer', async () => {
    const { calls, either } = pair(['forget']);
    expect(await either.forget()).toBe('local');
    expect(calls).toEqual(['local.forget', 'shared.forget']);
  });

  it('ignores the shared implementation being unavailable for a bothFirstLocal method (with the warning)', async () => {
    const { calls, shared, either } = pair(['forget']);
    shared.failure = new SharedStateUnavailableError('counter_forget');
    expect(await either.forget()).toBe('local');
    expect(calls).toEqual(['local.forget', 'shared.forget']);
    expect(fallbackWarnings()).toEqual([expect.objectContaining({ part: 'counter', operation: 'counter_forget' })]);
  });

  it('lets any other failure of a bothFirstLocal method through, after the local run', async () => {
    const { calls, shared, either } = pair(['forget']);
    shared.failure = new Error('a bug');
    await expect(either.forget()).rejects.toThrow('a bug');
    expect(calls).toEqual(['local.forget', 'shared.forget']);
  });

  it('lets a failure of the local implementation through', async () => {
    const { shared, local, either } = pair(['forget']);
    local.failure = new Error('local bug');
    await expect(either.forget()).rejects.toThrow('local bug');
    shared.failure = new SharedStateUnavailableError('counter_add');
    await expect(either.add(1)).rejects.toThrow('local bug');
  });

  it('passes members that are not functions through from the shared implementation', () => {
    const { either } = pair();
    expect(either.name).toBe('shared');
  });

  it('warns at most once a minute however many calls fall back', async () => {
    const { shared, either } = pair();
    shared.failure = new SharedStateUnavailableError('counter_add');
    await either.add(1);
    await either.add(2);
    expect(fallbackWarnings()).toHaveLength(1);
  });
});
