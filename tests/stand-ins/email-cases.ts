/**
 * Billing emails and who accepts them: WordPress's is_email() (the rule WooCommerce's REST API
 * applies to `billing.email`) and the service's checkout validation. The contract tests check both
 * columns against the running stand-in and the service's schemas, which share no code.
 *
 * The service may refuse more than WordPress (it keeps zod's email rule too, since the address is
 * also Stripe's receipt email), never less: a row where WordPress refuses and the service accepts
 * is the bug this table exists to keep out.
 */
export interface EmailCase {
  email: string;
  wordpress: 'accepts' | 'refuses';
  service: 'accepts' | 'refuses';
  why: string;
}

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
  { email: 'ada@example.123', wordpress: 'accepts', service: 'refuses', why: 'numeric top-level label (zod wants letters)' },
  { email: '.ada@example.com', wordpress: 'accepts', service: 'refuses', why: 'local part starting with a dot' },
  { email: 'a..b@example.com', wordpress: 'accepts', service: 'refuses', why: 'two dots in the local part' },
  { email: 'ada!@example.com', wordpress: 'accepts', service: 'refuses', why: 'a ! in the local part' },
  { email: 'ada\n@example.com', wordpress: 'accepts', service: 'refuses', why: "PCRE's $ before a final newline lets WordPress take it" },
];
