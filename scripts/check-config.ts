/**
 * npm start's first step (`prestart`): the configuration `next start` will
 * run with, checked before it prints "Ready". `next start` says Ready before
 * it loads the app, and the app's own check (instrumentation.ts) then stops a
 * server that already claimed to be up; this says what is wrong first and
 * keeps it from starting. Vercel does not run npm start: there the same check
 * runs when a function starts (lib/startup.ts).
 *
 * Exit 1 with the message when the configuration is invalid; names, never values.
 */
import { parseConfig } from '../lib/config';
import { nextEnvironment, whereSet } from './configuration';
import { ConfigError } from '../lib/errors';

const loaded = nextEnvironment(process.cwd(), false);
try {
  // `next start` always runs with NODE_ENV=production.
  const config = parseConfig({ ...loaded.env, NODE_ENV: 'production' });
  console.log(
    `Configuration checked: store, card provider and checkout tokens configured; shared state in ${config.redisUrl ? 'Redis' : 'process memory'}` +
      (config.warnings.length > 0 ? `; ${config.warnings.length} warning(s) at start:\n${config.warnings.map((w) => `  - ${w}`).join('\n')}` : '.'),
  );
} catch (error) {
  if (!(error instanceof ConfigError)) throw error;
  const where = whereSet(error.message, loaded);
  console.error(`Not starting: ${error.message}.${where ? `\n  Set in: ${where}.` : ''}\n  See .env.example and README "Configuration".`);
  process.exit(1);
}
