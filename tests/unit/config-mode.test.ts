/**
 * Configuration never fails silently: a `.env.local` copied from .env.example
 * and not filled in is named as such, the demo runs exactly when no upstream is
 * configured, and production refuses the example's placeholders. The .env
 * files are read the way Next.js reads them (scripts/configuration.ts).
 */
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { EXAMPLE_PLACEHOLDERS, parseConfig } from '@/lib/config';
import { ConfigError } from '@/lib/errors';
import { validateConfigurationAtStart } from '@/lib/startup';
import { nextEnvironment, whereSet, type LoadedEnvironment } from '@/scripts/configuration';
import { startMode } from '@/scripts/start-mode';
import { SERVICE_VARIABLES } from '@/scripts/service-process';
import { useTestEnv } from '../support/env';
import { loggedLines } from '../support/setup';

const dirs: string[] = [];
afterAll(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));
afterEach(() => useTestEnv());

/** A project directory holding these .env files. */
function project(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'config-mode-'));
  dirs.push(dir);
  for (const [name, contents] of Object.entries(files)) writeFileSync(join(dir, name), contents);
  return dir;
}

/**
 * Loads dir's .env files as `next dev` (dev) or `next start` would, from a process environment holding
 * none of the service's variables, and puts this process's environment back afterwards.
 */
function load(dir: string, dev: boolean): LoadedEnvironment {
  const saved = { ...process.env };
  const env = process.env as Record<string, string | undefined>;
  for (const name of Object.keys(env)) if (SERVICE_VARIABLES.test(name)) delete env[name];
  try {
    return nextEnvironment(dir, dev);
  } finally {
    for (const name of Object.keys(env)) delete env[name];
    Object.assign(env, saved);
  }
}

const exampleValues = (): Record<string, string> =>
  Object.fromEntries(
    readFileSync('.env.example', 'utf8')
      .split('\n')
      .map((line) => /^([A-Z0-9_]+)=(.*)$/.exec(line.trim()))
      .filter((match): match is RegExpExecArray => match !== null && match[2] !== '')
      .map((match) => [match[1] as string, match[2] as string]),
  );

describe('a .env.local copied from .env.example and not filled in', () => {
  const copied = () => {
    const dir = project({});
    copyFileSync('.env.example', join(dir, '.env.local'));
    return dir;
  };

  it('runs the demo under npm run dev, naming the placeholders it still holds and where', () => {
    const loaded = load(copied(), true);
    expect(startMode(loaded.env)).toEqual({ demo: true, why: 'no upstream configured', configured: [], placeholders: ['WOOCOMMERCE_URL', 'ALLOWED_ORIGINS'] });
    expect(loaded.sourceOf('WOOCOMMERCE_URL')).toBe('.env.local');
    // Its other values are usable as they are: the demo runs with them.
    const config = parseConfig(loaded.env);
    expect(config.placeholders).toEqual(['WOOCOMMERCE_URL', 'ALLOWED_ORIGINS']);
  });

  it('stops npm start with a message naming the placeholders and the empty variables', () => {
    const loaded = load(copied(), false);
    let error: unknown;
    try {
      parseConfig({ ...loaded.env, NODE_ENV: 'production' });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const message = (error as ConfigError).message;
    expect(message).toContain("these variables still hold the example's placeholders: WOOCOMMERCE_URL, ALLOWED_ORIGINS");
    expect(message).toContain('missing WOOCOMMERCE_CONSUMER_KEY');
    // The empty ones are set too, to nothing, in the same file.
    expect(whereSet(message, loaded)).toMatch(/^WOOCOMMERCE_CONSUMER_KEY, .*WOOCOMMERCE_URL, ALLOWED_ORIGINS \(\.env\.local\)$/);
    expect(message).not.toContain('shop.example.com');
  });

  it('every placeholder the service knows is one .env.example ships, and every other value there is usable', () => {
    const values = exampleValues();
    for (const [name, placeholder] of Object.entries(EXAMPLE_PLACEHOLDERS)) expect(values[name]).toBe(placeholder);
    const others = Object.fromEntries(Object.entries(values).filter(([name]) => !(name in EXAMPLE_PLACEHOLDERS)));
    expect(parseConfig({ ...others, NODE_ENV: 'development' }).placeholders).toEqual([]);
  });
});

describe('which mode npm run dev starts in', () => {
  it('configured as soon as one upstream variable holds a value of its own; a placeholder configures nothing', () => {
    const loaded = load(project({ '.env.local': 'STRIPE_SECRET_KEY=sk_test_mine\nWOOCOMMERCE_URL=https://shop.example.com\n' }), true);
    expect(startMode(loaded.env)).toMatchObject({ demo: false, why: 'upstream configured', configured: ['STRIPE_SECRET_KEY'], placeholders: ['WOOCOMMERCE_URL'] });
    expect(startMode({ WOOCOMMERCE_URL: 'https://my-shop.test' })).toMatchObject({ demo: false, configured: ['WOOCOMMERCE_URL'] });
  });

  it('the demo when the upstream variables are empty, whatever else is set', () => {
    const loaded = load(project({ '.env': 'WOOCOMMERCE_URL=\nSTRIPE_SECRET_KEY=  \nCHECKOUT_TOKEN_SECRET=a-secret-of-my-own-that-is-long-enough\n' }), true);
    expect(startMode(loaded.env)).toMatchObject({ demo: true, configured: [] });
  });

  it('never the demo in production', () => {
    expect(startMode({ NODE_ENV: 'production' })).toMatchObject({ demo: false, why: 'production' });
  });

  it('a malformed variable in .env.local is named with its file, never its value', () => {
    const loaded = load(project({ '.env.local': 'UPSTREAM_TIMEOUT_MS=abc\n' }), true);
    let message = '';
    try {
      parseConfig(loaded.env);
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toContain('UPSTREAM_TIMEOUT_MS must be a whole number of milliseconds');
    expect(whereSet(message, loaded)).toBe('UPSTREAM_TIMEOUT_MS (.env.local)');
    expect(message).not.toContain('abc');
  });
});

describe('the start-up check of a server started without npm run dev', () => {
  it('warns in development that a variable still holds the example’s placeholder', () => {
    useTestEnv({ NODE_ENV: 'development', WOOCOMMERCE_URL: EXAMPLE_PLACEHOLDERS.WOOCOMMERCE_URL });
    validateConfigurationAtStart();
    expect(loggedLines().find((line) => line.event === 'config.placeholders')).toMatchObject({
      level: 'warn',
      message: expect.stringContaining("these variables still hold the example's placeholders: WOOCOMMERCE_URL"),
    });
  });
});
