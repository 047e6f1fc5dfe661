import { fileURLToPath } from 'node:url';
import { configDefaults, defineConfig } from 'vitest/config';

export default defineConfig({
  resolve: {
    alias: { '@': fileURLToPath(new URL('.', import.meta.url)) },
  },
  test: {
    environment: 'node',
    setupFiles: ['tests/support/setup.ts'],
    // Route tests share module-level state (rate limiter, locks); isolate each file.
    isolate: true,
    // 15 s of a test's own time, plus up to 15 s waiting for a fresh rate-limit window (awayFromWindowEdge).
    testTimeout: 30_000,
    // After vitest's summary: which tests were skipped and why (REDIS_URL unset, …), where a reader looks.
    reporters: ['default', './tests/support/skip-summary-reporter.ts'],
    // `include` lives in each project: with `extends: true` a root include would be added to the e2e one.
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['tests/**/*.test.ts'],
          exclude: [...configDefaults.exclude, 'tests/e2e/**'],
          // Says once whether the tests against a real Redis run (REDIS_URL) or why they are skipped.
          globalSetup: ['tests/support/redis-global-setup.ts'],
        },
      },
      {
        // End-to-end: a production build served by `next start` against the HTTP stand-ins, and Chromium.
        // The build runs once in the global setup, only when e2e files are selected; this group runs
        // after the unit group so the servers and the browser do not compete with it for the CPU.
        extends: true,
        test: {
          name: 'e2e',
          include: ['tests/e2e/**/*.test.ts'],
          globalSetup: ['tests/support/e2e-global-setup.ts', 'tests/support/redis-global-setup.ts'],
          testTimeout: 60_000,
          hookTimeout: 120_000,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
