/**
 * The configuration as `next dev` / `next start` will read it, checked before
 * they start: both print "Ready" before the app (and its start-up check,
 * instrumentation.ts) is loaded, so a malformed variable would otherwise stop
 * the server only after it said it was up. Used by `npm run dev`
 * (scripts/dev.ts) and `npm start` (its `prestart`, scripts/check-config.ts).
 *
 * Messages name variables and the file each came from, never a value.
 * Not part of the production bundle.
 */
import { createRequire } from 'node:module';

type NextEnv = typeof import('@next/env');

// @next/env is what Next.js itself loads .env files with: resolved through next, which depends on it.
const nextEnv = createRequire(createRequire(import.meta.url).resolve('next/package.json'))('@next/env') as NextEnv;

export interface LoadedEnvironment {
  /** The variables Next.js will see: the process environment first, then each .env file in Next's order. */
  env: Record<string, string | undefined>;
  /** Where a variable comes from: "the environment", a file such as ".env.local", or undefined when unset. */
  sourceOf(name: string): string | undefined;
}

/**
 * Loads the .env files of `dir` exactly as Next.js does for `next dev` (dev) or `next start`
 * (.env.development.local / .env.production.local, .env.local, .env.development / .env.production, .env),
 * into this process's environment as Next.js would.
 */
export function nextEnvironment(dir: string, dev: boolean): LoadedEnvironment {
  const initial = { ...process.env };
  const { combinedEnv, loadedEnvFiles } = nextEnv.loadEnvConfig(dir, dev, { info: () => undefined, error: () => undefined }, true);
  return {
    env: { ...combinedEnv },
    sourceOf(name) {
      if (initial[name] !== undefined) return 'the environment';
      return loadedEnvFiles.find((file) => file.env[name] !== undefined)?.path;
    },
  };
}

/** "WOOCOMMERCE_URL, ALLOWED_ORIGINS (.env.local)": the names, grouped by where each is set. */
export function namesWithSources(names: readonly string[], loaded: LoadedEnvironment): string {
  const bySource = new Map<string, string[]>();
  for (const name of names) {
    const source = loaded.sourceOf(name) ?? 'not set';
    bySource.set(source, [...(bySource.get(source) ?? []), name]);
  }
  return [...bySource].map(([source, group]) => `${group.join(', ')} (${source})`).join('; ');
}

/** Where the variables a configuration message names are set ("UPSTREAM_TIMEOUT_MS (.env.local)"), or '' when none is. */
export function whereSet(message: string, loaded: LoadedEnvironment): string {
  const named = [...new Set(message.match(/\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b/g) ?? [])];
  const set = named.filter((name) => name !== 'NODE_ENV' && loaded.sourceOf(name) !== undefined);
  return set.length > 0 ? namesWithSources(set, loaded) : '';
}
