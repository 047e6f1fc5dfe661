/**
 * The checkout's email rule against WordPress's is_email(): the table of cases, the addresses a real
 * store accepted, the OpenAPI pattern that states the rule, and, when php is installed, WordPress's
 * own function over the table and over generated addresses, beside both TypeScript ports.
 */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CHECKOUT_EMAIL_PATTERN, isCheckoutEmail, isWordPressEmail } from '@/lib/checkout/email';
import { paymentIntentRequestSchema, submitOrderRequestSchema } from '@/lib/checkout/schemas';
import { isEmail as standInIsEmail } from '@/stand-ins/woocommerce/rest-validation';
import { EMAIL_CASES, STORE_ACCEPTED_EMAILS } from '../stand-ins/email-cases';

const verdict = (accepted: boolean) => (accepted ? 'accepts' : 'refuses');

/** Addresses built from the characters each of is_email()'s rules looks at, mostly well-formed, the same on every run. */
const ODD = fc.constantFrom(' ', '\n', '\t', '\0', '"', 'é', '@', '_', '\\');
const piece = (chars: string[], maxLength: number) =>
  fc
    .array(fc.oneof({ arbitrary: fc.constantFrom(...chars), weight: 12 }, { arbitrary: ODD, weight: 1 }), { minLength: 0, maxLength })
    .map((parts) => parts.join(''));
const GENERATED = fc.sample(
  fc
    .tuple(
      piece(['a', 'Z', '0', '.', '-', '!', '`', '%', '=', '?'], 6),
      fc.array(piece(['a', 'Z', '9', '-'], 4), { minLength: 1, maxLength: 4 }),
      fc.oneof({ arbitrary: fc.constant(''), weight: 6 }, { arbitrary: fc.constantFrom('.', '\n', ' ', '-'), weight: 1 }),
    )
    .map(([local, labels, end]) => `${local}@${labels.join('.')}${end}`),
  { numRuns: 4000, seed: 20_250_714 },
);

describe('the checkout email rule', () => {
  it('accepts the thirteen addresses a real store accepted, in contact_info and in the billing address of both endpoints', () => {
    expect(STORE_ACCEPTED_EMAILS).toHaveLength(13);
    expect(STORE_ACCEPTED_EMAILS.find((email) => email.length === 255)).toBeDefined();
    for (const email of STORE_ACCEPTED_EMAILS) {
      expect(isCheckoutEmail(email), email).toBe(true);
      expect(paymentIntentRequestSchema.safeParse({ token: 't', contact_info: { email } }).success, email).toBe(true);
      expect(submitOrderRequestSchema.safeParse({ token: 't', billing_address: { email } }).success, email).toBe(true);
    }
  });

  it('gives each case of the table its verdicts: WordPress\'s, and the service\'s', () => {
    for (const { email, wordpress, service, why } of EMAIL_CASES) {
      expect({ email, wordpress: verdict(isWordPressEmail(email)), service: verdict(isCheckoutEmail(email)) }, why).toEqual({ email, wordpress, service });
    }
  });

  it('refuses more than is_email() only for a newline or more than 320 characters', () => {
    for (const email of [...EMAIL_CASES.map((c) => c.email), ...GENERATED]) {
      const extra = isWordPressEmail(email) && !isCheckoutEmail(email);
      expect(extra, JSON.stringify(email)).toBe(isWordPressEmail(email) && (email.includes('\n') || email.length > 320));
    }
  });

  it('refuses an address over 320 characters with a 400 issue on the field, and takes one of 320', () => {
    const local = (n: number) => 'a'.repeat(n);
    expect(paymentIntentRequestSchema.safeParse({ token: 't', contact_info: { email: `${local(308)}@example.com` } }).success).toBe(true);
    const refused = paymentIntentRequestSchema.safeParse({ token: 't', contact_info: { email: `${local(309)}@example.com` } });
    expect(refused.error?.issues).toEqual([expect.objectContaining({ path: ['contact_info', 'email'], message: 'must be a valid email address' })]);
  });

  it('is stated in the OpenAPI document by a pattern that agrees with it on every case', () => {
    const pattern = new RegExp(CHECKOUT_EMAIL_PATTERN);
    for (const email of [...EMAIL_CASES.map((c) => c.email), ...GENERATED]) {
      expect(pattern.test(email), JSON.stringify(email)).toBe(isCheckoutEmail(email));
    }
  });
});

const IS_EMAIL_PHP = fileURLToPath(new URL('../stand-ins/wordpress-is-email.php', import.meta.url));

/** WordPress's is_email() (no plugin filter) over the given strings, in one php process. */
function phpIsEmail(emails: string[]): boolean[] | undefined {
  const input = Buffer.from(JSON.stringify(emails)).toString('base64');
  const script = [
    'function apply_filters($hook, $value) { return $value; }',
    'function _deprecated_argument() {}',
    `require ${JSON.stringify(IS_EMAIL_PHP)};`,
    `echo json_encode(array_map(fn($e) => is_email($e) !== false, json_decode(base64_decode('${input}'))));`,
  ].join(' ');
  try {
    return JSON.parse(execFileSync('php', ['-r', script], { encoding: 'utf8' })) as boolean[];
  } catch {
    return undefined;
  }
}

const hasPhp = phpIsEmail(['ada@example.com'])?.[0] === true;

describe.skipIf(!hasPhp)(`WordPress's own is_email() in php${hasPhp ? '' : ' (skipped: php is not installed)'}`, () => {
  it('gives the table\'s WordPress column, and both TypeScript ports agree with it on every case', () => {
    const emails = EMAIL_CASES.map((c) => c.email);
    const php = phpIsEmail(emails)!;
    emails.forEach((email, index) => {
      const expected = verdict(php[index]!);
      expect({ email, table: EMAIL_CASES[index]!.wordpress, service: verdict(isWordPressEmail(email)), standIn: verdict(standInIsEmail(email)) }).toEqual({
        email,
        table: expected,
        service: expected,
        standIn: expected,
      });
    });
  });

  it('agrees with both TypeScript ports on generated addresses', () => {
    const php = phpIsEmail(GENERATED)!;
    expect(php.filter(Boolean).length, 'some generated addresses are valid').toBeGreaterThan(100);
    GENERATED.forEach((email, index) => {
      expect({ email, service: isWordPressEmail(email), standIn: standInIsEmail(email) }).toEqual({ email, service: php[index], standIn: php[index] });
    });
  });
});
