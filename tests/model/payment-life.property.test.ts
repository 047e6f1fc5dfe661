/**
 * Any sequence of lifecycle steps, delivered in any order, twice, after a flush or
 * with a lost answer, leaves Stripe and WooCommerce agreeing (tests/model/payment-life.ts).
 * `npm test` runs a fixed seed and a small budget; `npm run test:model` more runs (MODEL_RUNS, MODEL_SEED).
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resetServices } from '@/lib/services';
import { createProviders } from '../support/providers';
import { noRedis, REDIS_SKIP_REASON, REDIS_URL, redisConnection, testPrefix } from '../support/redis';
import { FOUND_WITH, report, runScenario, scenarioArbitrary, type ModelRedis, type PaymentLife, type Scenario } from './payment-life';

const { providers, server } = createProviders();
beforeAll(() => server.listen({ onUnhandledRequest: 'error' }));
afterAll(() => server.close());

// `npm run test:model` (npm names the script in npm_lifecycle_event): more runs, a new seed each time.
const LARGE = process.env.npm_lifecycle_event === 'test:model';
const RUNS = Number(process.env.MODEL_RUNS ?? (LARGE ? 500 : 40));
const SEED = process.env.MODEL_SEED !== undefined ? Number(process.env.MODEL_SEED) : LARGE ? Date.now() % 2 ** 31 : 2026_11_26;
const MAX_STEPS = Number(process.env.MODEL_MAX_STEPS ?? 30);

/** Drops steps one at a time while the run still breaks the first invariant it broke: fast-check's shrink of a step list stops early. */
async function minimized(scenario: Scenario, broken: string, redis?: ModelRedis): Promise<PaymentLife> {
  let best = await runScenario(providers, scenario, redis);
  for (let i = best.scenario.steps.length - 1; i >= 0; i -= 1) {
    const candidate = { ...best.scenario, steps: best.scenario.steps.filter((_, j) => j !== i) };
    const life = await runScenario(providers, candidate, redis);
    if (life.violations.some((v) => v.invariant === broken)) best = life;
  }
  return best;
}

/** MODEL_STATS=1: how often each step kind did something (was not skipped) and each event type was delivered, over all runs. */
const stats = new Map<string, number>();
function count(life: PaymentLife): void {
  life.log.forEach((line, i) => {
    const step = /^\d+\. (\w+)/.exec(line);
    if (step && !life.log[i + 1]?.startsWith('    skipped')) stats.set(step[1]!, (stats.get(step[1]!) ?? 0) + 1);
    const delivery = /^ {4}([a-z_.]+) evt_\S+ -> .*2\d\d/.exec(line);
    if (delivery) stats.set(delivery[1]!, (stats.get(delivery[1]!) ?? 0) + 1);
  });
}
afterAll(() => {
  if (process.env.MODEL_STATS) process.stderr.write(`${[...stats].sort().map(([k, n]) => `${k}: ${n}`).join('\n')}\n`);
});

const EXAMPLES = Object.values(FOUND_WITH)
  .flat()
  .map((scenario) => [scenario] as [Scenario]);

/** The property over `runs` generated cases (plus the cases of FOUND_WITH); a failure minimized and reported. */
async function holds(runs: number, redis?: ModelRedis): Promise<void> {
  const details = await fc.check(
    fc.asyncProperty(scenarioArbitrary(MAX_STEPS), async (scenario) => {
      const life = await runScenario(providers, scenario, redis);
      if (process.env.MODEL_TRACE) process.stderr.write(`${report(life)}\n\n`);
      if (process.env.MODEL_STATS) count(life);
      if (life.violations.length > 0) throw new Error(report(life));
    }),
    // fast-check counts the examples among numRuns.
    { numRuns: runs + EXAMPLES.length, seed: SEED, examples: EXAMPLES },
  );
  if (details.failed && details.counterexample) {
    const [scenario] = details.counterexample;
    const first = (await runScenario(providers, scenario, redis)).violations[0];
    // A step that threw (not an invariant) is fast-check's report alone.
    if (!first) throw new Error(fc.defaultReportMessage(details));
    const life = await minimized(scenario, first.invariant, redis);
    throw new Error(`${fc.defaultReportMessage(details)}\n\nMinimized (steps dropped while the first invariant still breaks):\n${report(life)}`);
  }
  expect(details.failed).toBe(false);
}

describe('an order’s payment life (model-based)', () => {
  // MODEL_REPLAY='{"capture":"manual","orders":1,"steps":[{"kind":"pay","order":0}]}' runs that case alone and prints its trace.
  const replay = process.env.MODEL_REPLAY;
  if (replay !== undefined) {
    it('replays one case and prints its trace', async () => {
      const life = await runScenario(providers, JSON.parse(replay) as Scenario);
      process.stderr.write(`${report(life)}\n`);
      expect(life.violations).toEqual([]);
    });
    return;
  }

  it(
    'whatever the steps and their delivery, Stripe and WooCommerce agree and every fact is written once',
    () => holds(RUNS),
    Number(process.env.MODEL_TIMEOUT_MS ?? 30_000 + RUNS * 500),
  );

  describe.skipIf(noRedis)(`with Redis, a flush deleting the service's keys${noRedis ? ` (skipped: ${REDIS_SKIP_REASON})` : ''}`, () => {
    it('the same property, fewer cases', async () => {
      const prefix = testPrefix('model');
      const cleaner = redisConnection();
      const flush = async () => {
        const redis = await cleaner.client();
        const keys = await redis.keys(`${prefix}*`);
        if (keys.length > 0) await redis.del(keys);
      };
      try {
        await holds(Math.max(1, Math.round(RUNS / 3)), { url: REDIS_URL!, prefix, flush });
      } finally {
        resetServices();
      }
    }, Number(process.env.MODEL_TIMEOUT_MS ?? 30_000 + RUNS * 500));
  });
});
