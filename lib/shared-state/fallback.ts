/**
 * When Redis fails (docs/operations.md, "When Redis is down"), a piece's Redis implementation answers with this
 * instance's memory, warning at most once a minute; lib/services.ts decides which state may fall back.
 */
import { SharedStateUnavailableError } from '@/lib/errors';
import { atMostEvery, log } from '@/lib/log';

const WARNING_INTERVAL_MS = 60_000;

/** One warning a minute at most, whatever part fell back and however many requests did. */
export class FallbackWarning {
  constructor(private readonly now: () => number = Date.now) {}

  readonly note = atMostEvery(
    WARNING_INTERVAL_MS,
    (part: string, error: SharedStateUnavailableError) =>
      log.warn('redis.fallback_to_memory', {
        part,
        operation: error.details?.operation ?? null,
        cause: error.details?.cause,
        message: 'Redis is unavailable: this instance keeps this state in its own memory until Redis answers again',
      }),
    () => this.now(),
  );
}

/** `work`'s answer, or `onUnavailable`'s when it failed with SharedStateUnavailableError; any other failure propagates. */
export async function unlessUnavailable<T>(
  work: () => Promise<T>,
  onUnavailable: (error: SharedStateUnavailableError) => T | Promise<T>,
): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (!(error instanceof SharedStateUnavailableError)) throw error;
    return onUnavailable(error);
  }
}

/** The shared answer, or the in-process one when the shared state is unavailable (with the warning). */
export function eitherOf<T>(part: string, warning: FallbackWarning, shared: () => Promise<T>, local: () => Promise<T>): Promise<T> {
  return unlessUnavailable(shared, (error) => {
    warning.note(part, error);
    return local();
  });
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
