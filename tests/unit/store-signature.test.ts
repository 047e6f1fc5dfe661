/**
 * The store's signature (docs/decisions.md#d15): Stripe's scheme with the shared
 * secret, five minutes either way, and the companion plugin's PHP signing
 * the same bytes the same way (checked with php when it is installed).
 */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { signStoreCallback, storeSignatureProblem } from '@/lib/security/store-signature';

const SECRET = 'store-signature-secret-0123456789abcdef';
const BODY = '{"order_id":12,"refund_id":345,"amount":"10.00","reason":"Écharpe abîmée"}';
const NOW = 1_900_000_000;

describe('storeSignatureProblem', () => {
  it('accepts a signature of the exact body within five minutes either way', () => {
    for (const at of [NOW, NOW - 300, NOW + 300]) expect(storeSignatureProblem(signStoreCallback(BODY, SECRET, at), BODY, SECRET, NOW)).toBeUndefined();
  });

  it('refuses one older or newer than five minutes', () => {
    expect(storeSignatureProblem(signStoreCallback(BODY, SECRET, NOW - 301), BODY, SECRET, NOW)).toBe('stale');
    expect(storeSignatureProblem(signStoreCallback(BODY, SECRET, NOW + 301), BODY, SECRET, NOW)).toBe('stale');
  });

  it('refuses another secret, another body, and a timestamp moved after signing', () => {
    expect(storeSignatureProblem(signStoreCallback(BODY, `${SECRET}x`, NOW), BODY, SECRET, NOW)).toBe('mismatch');
    expect(storeSignatureProblem(signStoreCallback(BODY, SECRET, NOW), BODY.replace('10.00', '100.00'), SECRET, NOW)).toBe('mismatch');
    const moved = signStoreCallback(BODY, SECRET, NOW - 200).replace(`t=${NOW - 200}`, `t=${NOW}`);
    expect(storeSignatureProblem(moved, BODY, SECRET, NOW)).toBe('mismatch');
  });

  it('accepts any of several v1 while the secret is being changed', () => {
    const old = signStoreCallback(BODY, 'the-old-secret-0123456789abcdef0123', NOW);
    const current = signStoreCallback(BODY, SECRET, NOW);
    expect(storeSignatureProblem(`${old},${current.split(',')[1]}`, BODY, SECRET, NOW)).toBeUndefined();
  });

  it('tells a missing header from a malformed one', () => {
    expect(storeSignatureProblem(null, BODY, SECRET, NOW)).toBe('missing');
    expect(storeSignatureProblem('', BODY, SECRET, NOW)).toBe('missing');
    for (const header of ['v1=abc', `t=${NOW}`, `t=${NOW},v1=zz`, `t=soon,v1=${'0'.repeat(64)}`, 'garbage']) {
      expect(storeSignatureProblem(header, BODY, SECRET, NOW), header).toBe('malformed');
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

describe.skipIf(!hasPhp)('the companion plugin (php)', () => {
  it('signs a body exactly as the service verifies it', () => {
    const header = php(`echo checkout_cart_bridge_signature(${JSON.stringify(SECRET)}, ${NOW}, base64_decode(${JSON.stringify(Buffer.from(BODY).toString('base64'))}));`);
    expect(header).toBe(signStoreCallback(BODY, SECRET, NOW));
    expect(storeSignatureProblem(header!, BODY, SECRET, NOW)).toBeUndefined();
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
