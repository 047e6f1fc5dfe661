import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyCheckoutToken } from '@/lib/security/checkout-token';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const TSC = join(ROOT, 'node_modules/typescript/bin/tsc');
const secret = 'fresh-project-secret-long-enough-012345';

// A storefront's own TypeScript project: strict, Node's ESM resolution (which reads the package's
// `exports`), no access to the service's files.
const MAIN = `
import { createCheckoutClient, NotPayable, type Address, type PaymentIntent } from '@checkout-service/storefront-client';
import { mintCheckoutToken } from '@checkout-service/storefront-client/server';

const billing: Address = { first_name: 'Ada', country: 'GB', postcode: 'N1 7AA' };
const answers: Record<string, unknown> = {
  '/api/payment-intent': { success: true, client_secret: 'pi_1_secret_2', payment_intent_id: 'pi_1' },
  '/api/submit-order': { error: 'Order cannot be submitted for payment', details: { orderId: 7, status: 'processing', reason: 'Order is already paid' } },
};
const fakeFetch = (async (url: string | URL | Request) => {
  const path = new URL(String(url)).pathname;
  return new Response(JSON.stringify(answers[path]), { status: path === '/api/submit-order' ? 400 : 200 });
}) as typeof fetch;

const token = await mintCheckoutToken(7, { secret: ${JSON.stringify(secret)}, ttl: '10m' });
const checkout = createCheckoutClient({ baseUrl: 'https://checkout.example', fetch: fakeFetch });
const intent: PaymentIntent = await checkout.createPaymentIntent({ token, billing_address: billing, shipping_address: null });
// @ts-expect-error: submitOrder requires the billing address.
void checkout.submitOrder.bind(checkout, { token });
let reason = '';
try {
  await checkout.submitOrder({ token, billing_address: billing });
} catch (error) {
  if (error instanceof NotPayable) reason = error.reason;
}
console.log(JSON.stringify({ token, clientSecret: intent.client_secret, reason }));
`;

let work: string;
let tarball: string;

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'storefront-client-package-'));
  // prepack builds client/dist from the repository's sources.
  await run('npm', ['pack', '--pack-destination', work, '--no-fund', '--no-audit'], { cwd: join(ROOT, 'client') });
  tarball = readdirSync(work).find((name) => name.endsWith('.tgz')) ?? '';
}, 60_000);

afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('the storefront client as a package', () => {
  it('packs its built files with their type declarations, and nothing of the service', async () => {
    const { stdout } = await run('tar', ['-tzf', join(work, tarball)]);
    expect(stdout.trim().split('\n').sort()).toEqual(
      ['package.json', 'dist/index.js', 'dist/index.d.ts', 'dist/server.js', 'dist/server.d.ts', 'dist/types.d.ts'].map((file) => `package/${file}`).sort(),
    );
  });

  it('installs from its tarball into a fresh TypeScript project, which compiles against it and mints a token the service accepts', async () => {
    const app = join(work, 'storefront');
    mkdirSync(join(app, 'src'), { recursive: true });
    writeFileSync(
      join(app, 'package.json'),
      JSON.stringify({
        name: 'fresh-storefront',
        private: true,
        type: 'module',
        // jose, the server entry's dependency, from this machine: the install needs no network.
        dependencies: { '@checkout-service/storefront-client': `file:../${tarball}`, jose: `file:${join(ROOT, 'node_modules/jose')}` },
      }),
    );
    writeFileSync(
      join(app, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, lib: ['ES2022', 'DOM'], types: [], outDir: 'out', rootDir: 'src' },
        include: ['src'],
      }),
    );
    writeFileSync(join(app, 'src/main.ts'), MAIN);
    await run('npm', ['install', '--offline', '--ignore-scripts', '--no-audit', '--no-fund'], { cwd: app });
    const compiled = await run(process.execPath, [TSC, '-p', app]).catch((error: { stdout: string }) => ({ stdout: error.stdout, failed: true }));
    expect(compiled.stdout).toBe('');
    const { stdout } = await run(process.execPath, [join(app, 'out/main.js')], { cwd: app });
    const result = JSON.parse(stdout) as { token: string; clientSecret: string; reason: string };
    expect(result).toMatchObject({ clientSecret: 'pi_1_secret_2', reason: 'Order is already paid' });
    await expect(verifyCheckoutToken(result.token, { secret })).resolves.toBe(7);
  });
});
