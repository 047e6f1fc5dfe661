/**
 * The production server validates its configuration at start (DECISIONS 2):
 * without the store, card and token settings it refuses to start, naming
 * every missing variable; without a shipping webhook secret it refuses too,
 * unless SHIPPING_WEBHOOK_AUTH=off, which starts with a warning (DECISIONS 11).
 */
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { freePort, LOOPBACK } from '@/scripts/stand-ins/http';

const SERVICE_VARS = /^(WOOCOMMERCE_|STRIPE_|CHECKOUT_TOKEN_|ALLOWED_ORIGINS|TRUST_PROXY_HOPS|SHIPPING_|SHIPSTATION_|CLIENT_IP_HEADER||REDIS_URL|UPSTREAM_|CARD_PAYMENT|MANUAL_PAYMENT|LOG_LEVEL)/;

/** Runs `next start` until it exits or `untilOutput` appears; returns its output and exit code (null if still running). */
async function runServer(env: Record<string, string>, untilOutput: RegExp): Promise<{ output: string; code: number | null }> {
  const port = await freePort();
  const nextBin = createRequire(join(process.cwd(), 'package.json')).resolve('next/dist/bin/next');
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([key]) => !SERVICE_VARS.test(key)));
  const child = spawn(process.execPath, [nextBin, 'start', '--port', String(port), '--hostname', LOOPBACK], {
    env: { ...inherited, ...env, NODE_ENV: 'production', NEXT_TELEMETRY_DISABLED: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  return new Promise((resolve) => {
    const finish = (code: number | null) => {
      clearTimeout(timer);
      child.kill('SIGKILL');
      resolve({ output, code });
    };
    const timer = setTimeout(() => finish(null), 45_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (untilOutput.test(output)) finish(child.exitCode);
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
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
    WOOCOMMERCE_URL: 'https://shop.example.com',
    WOOCOMMERCE_CONSUMER_KEY: 'ck_startup',
    WOOCOMMERCE_CONSUMER_SECRET: 'cs_startup',
    STRIPE_SECRET_KEY: 'sk_test_startup',
    STRIPE_WEBHOOK_SECRET: 'whsec_startup',
    CHECKOUT_TOKEN_SECRET: 'startup-test-secret-0123456789abcdefghij',
    ALLOWED_ORIGINS: 'https://shop.example.com',
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
