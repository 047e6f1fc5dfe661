/**
 * Billing emails and who accepts them: WordPress's is_email() (the rule WooCommerce's REST API
 * applies to `billing.email`) and the service's checkout validation. The contract tests check both
 * columns against the running stand-in and the service's schemas, which share no code, and a php
 * test runs WordPress's own is_email() over the `wordpress` column.
 *
 * The service accepts what is_email() accepts, and refuses more only where the store would keep
 * another address or fail its save (a newline, more than 320 characters): a row where WordPress
 * refuses and the service accepts is the bug this table exists to keep out.
 */
export interface EmailCase {
  email: string;
  wordpress: 'accepts' | 'refuses';
  service: 'accepts' | 'refuses';
  why: string;
}

/** Addresses WordPress 6.8.3 and WooCommerce 10.0.2 accepted on a real store, which zod's email rule refused. */
export const STORE_ACCEPTED_EMAILS = [
  'ada.@example.com',
  '.ada@example.com',
  'ada..lovelace@example.com',
  'ada@127.0.0.1',
  'ada@example.c',
  'ada@example.123',
  `${'a'.repeat(243)}@example.com`,
  'ada!#$%&*{}|~@example.com',
  'ada%example.com@example.org',
  'ada`@example.com',
  '=?utf-8?q?x?=@example.com',
  'ada@e.x',
  '1@2.34',
];

export const EMAIL_CASES: EmailCase[] = [
  { email: 'ada@example.com', wordpress: 'accepts', service: 'accepts', why: 'ordinary' },
  { email: 'ada.lovelace+shop@example.co.uk', wordpress: 'accepts', service: 'accepts', why: 'dots, plus, three labels' },
  { email: "o'brien@example.ie", wordpress: 'accepts', service: 'accepts', why: 'apostrophe' },
  { email: 'a-b@x-y.example.com', wordpress: 'accepts', service: 'accepts', why: 'hyphen inside a label' },
  { email: 'ADA@EXAMPLE.COM', wordpress: 'accepts', service: 'accepts', why: 'capitals' },
  { email: 'a@b.co', wordpress: 'accepts', service: 'accepts', why: 'exactly six characters' },
  { email: 'ada@x-.com', wordpress: 'refuses', service: 'refuses', why: 'a label ending with a hyphen' },
  { email: 'ada@sub-.example.com', wordpress: 'refuses', service: 'refuses', why: 'an inner label ending with a hyphen' },
  { email: 'ada@-x.com', wordpress: 'refuses', service: 'refuses', why: 'a label starting with a hyphen' },
  { email: 'not-an-email', wordpress: 'refuses', service: 'refuses', why: 'no @' },
  { email: '@example.com', wordpress: 'refuses', service: 'refuses', why: 'nothing before the @' },
  { email: 'ada@@example.com', wordpress: 'refuses', service: 'refuses', why: 'two @' },
  { email: 'ada@localhost', wordpress: 'refuses', service: 'refuses', why: 'a single label' },
  { email: 'a@b.c', wordpress: 'refuses', service: 'refuses', why: 'five characters' },
  { email: 'ada@exa_mple.com', wordpress: 'refuses', service: 'refuses', why: 'underscore in the domain' },
  { email: 'ada@example..com', wordpress: 'refuses', service: 'refuses', why: 'two dots in a row' },
  { email: 'ada@.example.com', wordpress: 'refuses', service: 'refuses', why: 'domain starting with a dot' },
  { email: 'ada@example.com.', wordpress: 'refuses', service: 'refuses', why: 'domain ending with a dot' },
  { email: 'ada lovelace@example.com', wordpress: 'refuses', service: 'refuses', why: 'space in the local part' },
  { email: 'ada@exämple.com', wordpress: 'refuses', service: 'refuses', why: 'a letter outside ASCII' },
  { email: 'ada@example.com\n', wordpress: 'refuses', service: 'refuses', why: 'trailing newline' },
  { email: 'a..b@example.com', wordpress: 'accepts', service: 'accepts', why: 'two dots in the local part' },
  { email: 'ada!@example.com', wordpress: 'accepts', service: 'accepts', why: 'a ! in the local part' },
  { email: '-ada@example.com', wordpress: 'accepts', service: 'accepts', why: 'local part starting with a hyphen' },
  { email: 'ada@1.2.3.4', wordpress: 'accepts', service: 'accepts', why: 'four numeric labels' },
  { email: 'ada@xn--bcher-kva.example', wordpress: 'accepts', service: 'accepts', why: 'a punycode label' },
  { email: `${'a'.repeat(308)}@example.com`, wordpress: 'accepts', service: 'accepts', why: '320 characters, what the store keeps' },
  ...STORE_ACCEPTED_EMAILS.map((email): EmailCase => ({ email, wordpress: 'accepts', service: 'accepts', why: 'an address a real store accepted' })),
  { email: 'ada\n@example.com', wordpress: 'accepts', service: 'refuses', why: "PCRE's $ lets is_email() take a final newline; sanitize_email() then drops it" },
  { email: `${'a'.repeat(309)}@example.com`, wordpress: 'accepts', service: 'refuses', why: "321 characters: HPOS's billing_email is varchar(320), the save fails" },
  { email: ' ada@example.com', wordpress: 'refuses', service: 'refuses', why: 'a leading space' },
  { email: 'ada@example.com ', wordpress: 'refuses', service: 'refuses', why: 'a trailing space' },
  { email: 'ada@example.com\t', wordpress: 'refuses', service: 'refuses', why: 'a trailing tab' },
  { email: '"ada"@example.com', wordpress: 'refuses', service: 'refuses', why: 'a quoted local part' },
  { email: 'ada(x)@example.com', wordpress: 'refuses', service: 'refuses', why: 'a comment in the local part' },
  { email: 'ada\\@example.com', wordpress: 'refuses', service: 'refuses', why: 'a backslash in the local part' },
  { email: 'ad,a@example.com', wordpress: 'refuses', service: 'refuses', why: 'a comma in the local part' },
  { email: 'ada\u0000@example.com', wordpress: 'refuses', service: 'refuses', why: 'a NUL byte' },
  { email: 'é@b.co', wordpress: 'refuses', service: 'refuses', why: 'a letter outside ASCII in the local part' },
  { email: 'ada@[127.0.0.1]', wordpress: 'refuses', service: 'refuses', why: 'an address literal' },
  { email: 'ada@example.com@example.org', wordpress: 'refuses', service: 'refuses', why: 'an @ in the domain' },
  { email: 'ada@exam ple.com', wordpress: 'refuses', service: 'refuses', why: 'a space in a label' },
  { email: 'ada@ex\nample.com', wordpress: 'refuses', service: 'refuses', why: 'a newline inside a label' },
  { email: 'ada@example.-com', wordpress: 'refuses', service: 'refuses', why: 'a last label starting with a hyphen' },
  { email: 'ada@-.com', wordpress: 'refuses', service: 'refuses', why: 'a label of a hyphen only' },
  { email: 'ada@.', wordpress: 'refuses', service: 'refuses', why: 'a domain of a dot' },
  { email: 'ada@', wordpress: 'refuses', service: 'refuses', why: 'no domain' },
  { email: '@@example.com', wordpress: 'refuses', service: 'refuses', why: 'an empty local part before a second @' },
  { email: '', wordpress: 'refuses', service: 'refuses', why: 'empty' },
];
