/**
 * The production server validates its configuration at start (docs/decisions.md#d2):
 * without the store, card and token settings it refuses to start, naming
 * every missing variable; without a shipping webhook secret it refuses too,
 * unless SHIPPING_WEBHOOK_AUTH=off, which starts with a warning (docs/decisions.md#d11).
 *
 * `npm start` and `npm run dev` check it before anything says ready: a
 * malformed variable stops them with its name and where it is set, and no
 * "Ready" line comes first.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { environmentWithoutServiceVariables } from '@/scripts/service-process';
import { freePort, LOOPBACK } from '@/stand-ins/loopback-http';

/** Runs `next start` until it exits or `untilOutput` appears; returns its output and exit code (null if still running). */
async function runServer(env: Record<string, string>, untilOutput: RegExp): Promise<{ output: string; code: number | null }> {
  const port = await freePort();
  const nextBin = createRequire(join(process.cwd(), 'package.json')).resolve('next/dist/bin/next');
  const inherited = environmentWithoutServiceVariables();
  const child = spawn(process.execPath, [nextBin, 'start', '--port', String(port), '--hostname', LOOPBACK], {
    env: { ...inherited, ...env, NODE_ENV: 'production', NEXT_TELEMETRY_DISABLED: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return outputUntil(child, untilOutput, 45_000, () => child.kill('SIGKILL'));
}

/** A child's output until it exits, `untilOutput` appears or `timeoutMs` passes (code null); then `stop` ends it. */
function outputUntil(child: ChildProcess, untilOutput: RegExp, timeoutMs: number, stop: () => void): Promise<{ output: string; code: number | null }> {
  let output = '';
  return new Promise((resolve) => {
    let done = false;
    const finish = (code: number | null) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      stop();
      resolve({ output, code });
    };
    const timer = setTimeout(() => finish(null), timeoutMs);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (untilOutput.test(output)) finish(child.exitCode);
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', (code) => finish(code));
  });
}

describe('production start', () => {
  it('refuses to start without store, card and token settings, naming each variable and no value', async () => {
    const { output, code } = await runServer({ STRIPE_SECRET_KEY: 'sk_test_VALUE_MUST_NOT_APPEAR' }, /$^/);
    expect(code).toBe(1);
    expect(output).toContain('"event":"config.invalid"');
    for (const name of ['WOOCOMMERCE_URL', 'WOOCOMMERCE_CONSUMER_KEY', 'STRIPE_WEBHOOK_SECRET', 'CHECKOUT_TOKEN_SECRET']) {
      expect(output).toContain(name);
    }
    expect(output).not.toContain('VALUE_MUST_NOT_APPEAR');
  });

  const complete = {
    WOOCOMMERCE_URL: 'https://shop.test',
    WOOCOMMERCE_CONSUMER_KEY: 'ck_startup',
    WOOCOMMERCE_CONSUMER_SECRET: 'cs_startup',
    STRIPE_SECRET_KEY: 'sk_test_startup',
    STRIPE_WEBHOOK_SECRET: 'whsec_startup',
    CHECKOUT_TOKEN_SECRET: 'startup-test-secret-0123456789abcdefghij',
    ALLOWED_ORIGINS: 'https://shop.test',
  };

  it('refuses to start without a shipping webhook secret unless told otherwise', async () => {
    const { output, code } = await runServer(complete, /$^/);
    expect(code).toBe(1);
    expect(output).toContain('"event":"config.invalid"');
    expect(output).toContain('SHIPPING_WEBHOOK_AUTH=off');
  });

  it('starts with SHIPPING_WEBHOOK_AUTH=off and warns that the shipping webhook has no secret', async () => {
    const { output, code } = await runServer({ ...complete, SHIPPING_WEBHOOK_AUTH: 'off' }, /"event":"service\.started"/);
    expect(code).toBeNull();
    expect(output).toContain('SHIPPING_WEBHOOK_SECRET is not set and SHIPPING_WEBHOOK_AUTH=off');
    expect(output).toContain('"event":"service.started"');
  });
});

/** Runs an npm script to its end (or until `untilOutput`), with only the service variables given. */
async function runScript(script: 'start' | 'dev', env: Record<string, string>, untilOutput = /$^/): Promise<{ output: string; code: number | null }> {
  const inherited = environmentWithoutServiceVariables();
  const child = spawn('npm', ['run', script], {
    env: { NODE_ENV: script === 'start' ? 'production' : 'development', ...inherited, ...env, PORT: String(await freePort()), NEXT_TELEMETRY_DISABLED: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  return outputUntil(child, untilOutput, 60_000, () => {
    try {
      // npm's children (next and its workers) are in the group, not only npm.
      if (child.pid) process.kill(-child.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  });
}

describe('checked before anything says ready', () => {
  const complete = {
    WOOCOMMERCE_URL: 'https://shop.test',
    WOOCOMMERCE_CONSUMER_KEY: 'ck_startup',
    WOOCOMMERCE_CONSUMER_SECRET: 'cs_startup',
    STRIPE_SECRET_KEY: 'sk_test_startup',
    STRIPE_WEBHOOK_SECRET: 'whsec_startup',
    CHECKOUT_TOKEN_SECRET: 'startup-test-secret-0123456789abcdefghij',
    ALLOWED_ORIGINS: 'https://shop.test',
    SHIPPING_WEBHOOK_SECRET: 'startup-shipping-secret-0123',
  };

  it('npm start stops on a malformed variable with its name and where it is set, and never says Ready', async () => {
    const { output, code } = await runScript('start', { ...complete, UPSTREAM_TIMEOUT_MS: 'abc' });
    expect(code).toBe(1);
    expect(output).toContain('Not starting: Invalid configuration: UPSTREAM_TIMEOUT_MS must be a whole number of milliseconds from 1 to 120000');
    expect(output).toContain('Set in: UPSTREAM_TIMEOUT_MS (the environment)');
    expect(output).not.toMatch(/Ready/);
    expect(output).not.toContain('abc');
  });

  it('npm start says the configuration is checked before Next.js says Ready', async () => {
    const { output } = await runScript('start', complete, /Ready in/);
    const checked = output.indexOf('Configuration checked: store, card provider and checkout tokens configured');
    expect(checked).toBeGreaterThan(-1);
    expect(output.indexOf('Ready in')).toBeGreaterThan(checked);
  });

  it('npm run dev stops on a malformed variable before starting anything', async () => {
    const { output, code } = await runScript('dev', { UPSTREAM_TIMEOUT_MS: 'abc' });
    expect(code).toBe(1);
    expect(output).toContain('Not starting: Invalid configuration: UPSTREAM_TIMEOUT_MS must be a whole number of milliseconds from 1 to 120000');
    expect(output).not.toMatch(/Ready|Demo mode|demo is running/);
  });

  it('npm run dev refuses a configuration that is begun but not complete, naming what is left', async () => {
    const { output, code } = await runScript('dev', { STRIPE_SECRET_KEY: 'sk_test_mine', WOOCOMMERCE_URL: 'https://shop.example.com' });
    expect(code).toBe(1);
    expect(output).toContain('Not starting: STRIPE_SECRET_KEY (the environment) is set, so the demo is off, but the configuration is not complete:');
    expect(output).toContain("these variables still hold the example's placeholders: WOOCOMMERCE_URL (the environment)");
    expect(output).toContain('not set: WOOCOMMERCE_CONSUMER_KEY, WOOCOMMERCE_CONSUMER_SECRET, STRIPE_WEBHOOK_SECRET, CHECKOUT_TOKEN_SECRET');
    expect(output).not.toMatch(/Ready|demo is running/);
  });
});
