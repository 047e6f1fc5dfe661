/**
 * `npm test` ends with what was skipped and why (tests/support/skip-summary-reporter.ts):
 * run on a tiny selection, as a reader would, in a vitest of its own.
 */
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REDIS_SKIP_REASON } from '../support/redis-global-setup';

const vitestBin = join(createRequire(join(process.cwd(), 'package.json')).resolve('vitest/package.json'), '..', 'vitest.mjs');

/** Runs vitest without REDIS_URL on the files; returns its output's non-empty lines. */
function runVitest(files: string[]): string[] {
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([key]) => !/^(VITEST|REDIS_URL$|TEST$|NODE_ENV$)/.test(key)));
  const result = spawnSync(process.execPath, [vitestBin, 'run', '--project', 'unit', ...files], {
    env: { ...inherited, NODE_ENV: 'test', NO_COLOR: '1', FORCE_COLOR: '0', CI: 'true' },
    encoding: 'utf8',
    timeout: 60_000,
  });
  expect(result.status, result.stderr).toBe(0);
  return result.stdout.split('\n').map((line) => line.trimEnd()).filter((line) => line !== '');
}

describe('the test run summary', () => {
  it('without REDIS_URL, ends with how many tests were skipped and why, after vitest’s own counts', () => {
    const lines = runVitest(['tests/unit/replay-state.test.ts', 'tests/unit/money.test.ts']);
    const counts = lines.findIndex((line) => /^\s*Tests\s+\d+ passed \| 8 skipped/.test(line));
    expect(counts).toBeGreaterThan(-1);
    expect(lines.slice(counts + 1)).toEqual([
      expect.stringMatching(/^\s*Start at/),
      expect.stringMatching(/^\s*Duration/),
      ' Skipped  8 tests, and why:',
      `  8 tests in 1 file: ${REDIS_SKIP_REASON}`,
      '    tests/unit/replay-state.test.ts (8)',
    ]);
  });

  it('says nothing more when nothing was skipped, so the run still ends on vitest’s counts', () => {
    const lines = runVitest(['tests/unit/money.test.ts']);
    expect(lines.at(-1)).toMatch(/^\s*Duration/);
    expect(lines.join('\n')).not.toContain('Skipped');
  });
});
