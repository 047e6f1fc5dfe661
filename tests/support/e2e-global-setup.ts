/**
 * Global setup of the e2e project (vitest.config.ts): makes sure a production
 * build of the app exists and is newer than its sources, running `next build`
 * once before any end-to-end test starts. Unit and route test runs never get
 * here: vitest calls a project's global setup only when it has files to run.
 *
 * E2E_REBUILD=1 forces a build; E2E_SKIP_BUILD=1 trusts whatever .next holds.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { buildIdPath, buildIsCurrent } from '@/scripts/service-process';

const ROOT = process.cwd();
const BUILD_ID = buildIdPath(ROOT);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export default async function setup(): Promise<void> {
  if (process.env.E2E_SKIP_BUILD === '1' && existsSync(BUILD_ID)) return;
  let force = process.env.E2E_REBUILD === '1';
  const nextBin = createRequire(join(ROOT, 'package.json')).resolve('next/dist/bin/next');
  const env: NodeJS.ProcessEnv = { ...process.env, NODE_ENV: 'production', NEXT_TELEMETRY_DISABLED: '1' };
  const started = Date.now();

  // In a shared working tree another `next build` may hold Next's build lock: wait for it, then
  // use its output if it is current, as a cache would.
  for (let attempt = 1; ; attempt += 1) {
    if (!force && buildIsCurrent(ROOT)) return;
    console.log('[e2e] building the app with `next build` for the end-to-end tests (about a minute) ...');
    const result = spawnSync(process.execPath, [nextBin, 'build'], { cwd: ROOT, env, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
    const output = `${result.stdout ?? ''}${result.stderr ?? ''}`;
    mkdirSync(join(ROOT, 'test-artifacts'), { recursive: true });
    writeFileSync(join(ROOT, 'test-artifacts', 'e2e-build.log'), output);
    if (result.status === 0) break;
    if (/Another next build process is already running/.test(output) && attempt < 40) {
      console.log('[e2e] another `next build` is running in this tree; waiting for it ...');
      force = false;
      await sleep(5000);
      continue;
    }
    throw new Error(`next build failed (exit ${result.status}); see test-artifacts/e2e-build.log:\n${output.slice(-4000)}`);
  }
  console.log(`[e2e] build done in ${Math.round((Date.now() - started) / 1000)} s`);
}
