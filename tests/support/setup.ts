/**
 * Runs before every test file: log lines are captured instead of printed, so
 * tests can assert on them (and on what they must never contain).
 */
import { afterEach, beforeEach, vi } from 'vitest';

beforeEach(() => {
  vi.spyOn(console, 'log').mockImplementation(() => undefined);
  vi.spyOn(console, 'warn').mockImplementation(() => undefined);
  vi.spyOn(console, 'error').mockImplementation(() => undefined);
});

afterEach(() => {
  vi.restoreAllMocks();
});

/** Every JSON log line written so far in this test, parsed. */
export function loggedLines(): Record<string, unknown>[] {
  const lines: Record<string, unknown>[] = [];
  for (const method of ['log', 'warn', 'error'] as const) {
    const spy = console[method] as unknown as { mock?: { calls: unknown[][] } };
    for (const call of spy.mock?.calls ?? []) {
      try {
        lines.push(JSON.parse(String(call[0])) as Record<string, unknown>);
      } catch {
        lines.push({ raw: String(call[0]) });
      }
    }
  }
  return lines;
}
