/** `npm run setup:webhooks` as a shop runs it: the script against the Stripe stand-in over HTTP. */
import { execFile } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STRIPE_SDK_API_VERSION } from '@/lib/webhooks/setup/events';
import { startStripeStandIn, type StripeStandIn } from '@/stand-ins/stripe/loopback-server';
import { StripeModel } from '@/stand-ins/stripe/model';

const ROOT = path.resolve(import.meta.dirname, '../..');
const KEY = 'sk_test_setup_command_0123456789';
const EMPTY_DIR = mkdtempSync(path.join(tmpdir(), 'setup-webhooks-'));
let standIn: StripeStandIn;

beforeAll(async () => {
  standIn = await startStripeStandIn({ model: new StripeModel(), secretKey: KEY });
});
afterAll(() => standIn.close());

async function command(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const env: NodeJS.ProcessEnv = {
    NODE_ENV: 'test',
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '',
    STRIPE_SECRET_KEY: KEY,
    STRIPE_API_BASE_URL: standIn.url,
  };
  try {
    // Run from an empty directory: a developer's .env.local (real ShipStation keys) is never read.
    const { stdout, stderr } = await promisify(execFile)(
      path.join(ROOT, 'node_modules/.bin/tsx'),
      ['--tsconfig', path.join(ROOT, 'tsconfig.json'), path.join(ROOT, 'scripts/setup-webhooks.ts'), ...args],
      { cwd: EMPTY_DIR, env },
    );
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

describe('npm run setup:webhooks', () => {
  it('creates the endpoint and prints its secret once, then finds it up to date', async () => {
    const first = await command('--url', 'https://pay.example.test');
    expect(first.code).toBe(0);
    const [endpoint] = standIn.model.webhookEndpoints.all();
    expect(endpoint).toMatchObject({ url: 'https://pay.example.test/api/stripe/webhook', api_version: STRIPE_SDK_API_VERSION });
    const secret = standIn.model.webhookEndpoints.secretOf(endpoint!.id)!;
    expect(first.stdout.split(secret)).toHaveLength(2);
    expect(first.stderr).not.toContain(secret);

    const second = await command('--url=https://pay.example.test/');
    expect(second.code).toBe(0);
    expect(second.stdout).toContain('up to date');
    expect(second.stdout).not.toContain('whsec_');
    expect(standIn.model.webhookEndpoints.all()).toHaveLength(1);
  });

  it('refuses a missing or non-https --url with exit code 2, changing nothing', async () => {
    const before = standIn.model.webhookEndpoints.all();
    for (const args of [[], ['--url', 'http://pay.example.test']]) {
      const result = await command(...args);
      expect(result.code).toBe(2);
      expect(result.stderr).toContain('npm run setup:webhooks -- --url https://');
    }
    expect(standIn.model.webhookEndpoints.all()).toEqual(before);
  });
});
