/**
 * npm start's first step: the configuration check (scripts/check-config.ts) before `next start`
 * says Ready. The check is TypeScript run by tsx, a development dependency, so an install without
 * them (`npm ci --omit=dev` on a server) skips it and says so: the server's own check
 * (lib/startup.ts) still refuses a bad configuration when it starts, only after "Ready".
 */
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';

let tsxCli;
try {
  tsxCli = createRequire(import.meta.url).resolve('tsx/cli');
} catch {
  console.log('Configuration check before start skipped: tsx (a development dependency) is not installed; the server checks the configuration when it starts.');
  process.exit(0);
}
const check = spawnSync(process.execPath, [tsxCli, 'scripts/check-config.ts'], { stdio: 'inherit' });
process.exit(check.status ?? 1);
