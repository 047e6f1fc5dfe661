/**
 * The store's signature (docs/decisions.md#d15): HMAC-SHA256 of "<t>.<METHOD> <path>.<raw body>"
 * with the shared secret, five minutes either way, and the companion plugin's PHP signing the same
 * string the same way (checked with php when it is installed).
 */
import { execFileSync } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { signStoreCallback, storeSignatureProblem, storeSignedPayload, type StoreCall } from '@/lib/security/store-signature';

const SECRET = 'store-signature-secret-0123456789abcdef';
const BODY = '{"order_id":12,"refund_id":345,"amount":"10.00","reason":"Écharpe abîmée"}';
const REFUND: StoreCall = { method: 'POST', path: '/api/store/refunds', rawBody: BODY };
const NOW = 1_900_000_000;

const hmac = (secret: string, text: string) => createHmac('sha256', secret).update(text, 'utf8').digest('hex');

describe('the signed string', () => {
  it('is "<t>.<METHOD> <path>.<raw body>", the path without its query string', () => {
    const capture: StoreCall = { method: 'POST', path: '/api/store/capture', rawBody: '{"order_id":42}' };
    expect(storeSignedPayload('1764150000', capture)).toBe('1764150000.POST /api/store/capture.{"order_id":42}');
    expect(signStoreCallback(capture, SECRET, 1_764_150_000)).toBe(
      `t=1764150000,v2=${hmac(SECRET, '1764150000.POST /api/store/capture.{"order_id":42}')}`,
    );
    for (const path of ['/api/store/capture?x=1', 'https://checkout.example.com/api/store/capture?x=1']) {
      expect(storeSignedPayload('1764150000', { ...capture, path })).toBe('1764150000.POST /api/store/capture.{"order_id":42}');
    }
    expect(storeSignedPayload('1', { ...capture, method: 'post' })).toBe('1.POST /api/store/capture.{"order_id":42}');
  });
});

describe('storeSignatureProblem', () => {
  it('accepts a signature of the exact call within five minutes either way', () => {
    for (const at of [NOW, NOW - 300, NOW + 300]) expect(storeSignatureProblem(signStoreCallback(REFUND, SECRET, at), REFUND, SECRET, NOW)).toBeUndefined();
  });

  it('refuses one older or newer than five minutes', () => {
    expect(storeSignatureProblem(signStoreCallback(REFUND, SECRET, NOW - 301), REFUND, SECRET, NOW)).toBe('stale');
    expect(storeSignatureProblem(signStoreCallback(REFUND, SECRET, NOW + 301), REFUND, SECRET, NOW)).toBe('stale');
  });

  it('refuses another secret, another body, and a timestamp moved after signing', () => {
    expect(storeSignatureProblem(signStoreCallback(REFUND, `${SECRET}x`, NOW), REFUND, SECRET, NOW)).toBe('mismatch');
    const more = { ...REFUND, rawBody: BODY.replace('10.00', '100.00') };
    expect(storeSignatureProblem(signStoreCallback(REFUND, SECRET, NOW), more, SECRET, NOW)).toBe('mismatch');
    const moved = signStoreCallback(REFUND, SECRET, NOW - 200).replace(`t=${NOW - 200}`, `t=${NOW}`);
    expect(storeSignatureProblem(moved, REFUND, SECRET, NOW)).toBe('mismatch');
  });

  describe('a signature bound to its action', () => {
    it('refuses a body signed for another path or another method', () => {
      const order = '{"order_id":42}';
      const cancel = signStoreCallback({ method: 'POST', path: '/api/store/cancel-authorization', rawBody: order }, SECRET, NOW);
      for (const path of ['/api/store/capture', '/api/store/refunds', '/api/store/cancel-authorization/']) {
        expect(storeSignatureProblem(cancel, { method: 'POST', path, rawBody: order }, SECRET, NOW), path).toBe('mismatch');
      }
      expect(storeSignatureProblem(cancel, { method: 'PUT', path: '/api/store/cancel-authorization', rawBody: order }, SECRET, NOW)).toBe('mismatch');
      expect(storeSignatureProblem(cancel, { method: 'POST', path: '/api/store/cancel-authorization', rawBody: order }, SECRET, NOW)).toBeUndefined();
    });

    it('refuses a header with only the body-only v1 of plugins before 1.3.0, even a valid one', () => {
      const v1 = `t=${NOW},v1=${hmac(SECRET, `${NOW}.${BODY}`)}`;
      expect(storeSignatureProblem(v1, REFUND, SECRET, NOW)).toBe('old_scheme');
    });
  });

  it('accepts any of several v2 while the secret is being changed, and ignores other keys', () => {
    const old = signStoreCallback(REFUND, 'the-old-secret-0123456789abcdef0123', NOW);
    const current = signStoreCallback(REFUND, SECRET, NOW);
    const currentV2 = current.split(',')[1]!;
    expect(storeSignatureProblem(`${old},${currentV2}`, REFUND, SECRET, NOW)).toBeUndefined();
    expect(storeSignatureProblem(`${currentV2},${old}`, REFUND, SECRET, NOW)).toBeUndefined();
    expect(storeSignatureProblem(`v1=${'0'.repeat(64)},${current},v3=zz,scheme=hmac`, REFUND, SECRET, NOW)).toBeUndefined();
    expect(storeSignatureProblem(old, REFUND, SECRET, NOW)).toBe('mismatch');
  });

  it('tells a missing header from a malformed one', () => {
    expect(storeSignatureProblem(null, REFUND, SECRET, NOW)).toBe('missing');
    expect(storeSignatureProblem('', REFUND, SECRET, NOW)).toBe('missing');
    for (const header of ['v2=abc', `t=${NOW}`, `t=${NOW},v2=zz`, `t=soon,v2=${'0'.repeat(64)}`, `t=${NOW},V2=${'0'.repeat(64)}`, 'garbage']) {
      expect(storeSignatureProblem(header, REFUND, SECRET, NOW), header).toBe('malformed');
    }
  });
});

const PHP_FUNCTIONS = fileURLToPath(new URL('../../wordpress/checkout-cart-bridge/includes/functions.php', import.meta.url));

function php(code: string): string | undefined {
  try {
    return execFileSync('php', ['-r', `define('ABSPATH', '/'); require ${JSON.stringify(PHP_FUNCTIONS)}; ${code}`], { encoding: 'utf8' });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

const hasPhp = php('echo "ok";') === 'ok';
const phpString = (text: string) => `base64_decode(${JSON.stringify(Buffer.from(text).toString('base64'))})`;

describe.skipIf(!hasPhp)('the companion plugin (php)', () => {
  it('signs a call exactly as the service verifies it', () => {
    const url = 'https://checkout.example.com/api/store/refunds';
    const header = php(
      `echo checkout_cart_bridge_signature(${JSON.stringify(SECRET)}, ${NOW}, 'POST', checkout_cart_bridge_signed_path(${JSON.stringify(url)}), ${phpString(BODY)});`,
    );
    expect(header).toBe(signStoreCallback(REFUND, SECRET, NOW));
    expect(storeSignatureProblem(header!, REFUND, SECRET, NOW)).toBeUndefined();
    expect(storeSignatureProblem(header!, { ...REFUND, path: '/api/store/capture' }, SECRET, NOW)).toBe('mismatch');
  });

  it('signs the path of the URL it calls, without query string, under a prefix too', () => {
    const cases: [string, string][] = [
      ['https://checkout.example.com/api/store/capture', '/api/store/capture'],
      ['http://127.0.0.1:3000/api/store/cancel-authorization?x=1', '/api/store/cancel-authorization'],
      ['https://example.com/checkout/api/store/refunds', '/checkout/api/store/refunds'],
      ['https://example.com', '/'],
    ];
    const script = cases.map(([url]) => `echo checkout_cart_bridge_signed_path(${JSON.stringify(url)}), "\\n";`).join('');
    expect(php(script)).toBe(cases.map(([, path]) => `${path}\n`).join(''));
  });

  it('takes an order id only as a positive integer (never -N through absint, never abc as 0)', () => {
    const cases: [string, boolean][] = [
      ['7', true],
      ['42', true],
      ['0', false],
      ['-7', false],
      ['abc', false],
      ['7abc', false],
      ['1e3', false],
      ['7.0', false],
      [' 7', false],
      ['99999999999999999999', false],
    ];
    const script = cases.map(([value]) => `echo checkout_cart_bridge_is_positive_id(${JSON.stringify(value)}) ? '1' : '0';`).join('');
    expect(php(script)).toBe(cases.map(([, ok]) => (ok ? '1' : '0')).join(''));
    expect(php("echo checkout_cart_bridge_is_positive_id(7) ? '1' : '0', checkout_cart_bridge_is_positive_id(-7) ? '1' : '0', checkout_cart_bridge_is_positive_id(7.5) ? '1' : '0';")).toBe('100');
  });
});

describe('the companion plugin’s version', () => {
  it('is the readme’s stable tag, with a changelog entry (the v2 signature came with 1.3.0)', () => {
    const plugin = readFileSync(new URL('../../wordpress/checkout-cart-bridge/checkout-cart-bridge.php', import.meta.url), 'utf8');
    const readme = readFileSync(new URL('../../wordpress/checkout-cart-bridge/readme.txt', import.meta.url), 'utf8');
    const version = /^ \* Version:\s+(\S+)$/m.exec(plugin)?.[1];
    expect(version).toMatch(/^\d+\.\d+\.\d+$/);
    expect(/^Stable tag: (\S+)$/m.exec(readme)?.[1]).toBe(version);
    expect(readme).toContain(`= ${version} =`);
    expect(readme).toMatch(/= 1\.3\.0 =\n[^=]*`v2`/);
  });
});
