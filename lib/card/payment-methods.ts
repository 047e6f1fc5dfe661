/**
 * The payment method title written on a paid order (STRIPE_PAYMENT_METHODS, docs/decisions.md#d37):
 * the configured card title for a card, else the name of the method the
 * customer actually used, so a bank debit is not shown as "Credit Card".
 */
const NAMES: Record<string, string> = {
  link: 'Link',
  sepa_debit: 'SEPA Direct Debit',
  us_bank_account: 'ACH Direct Debit',
  bacs_debit: 'Bacs Direct Debit',
  au_becs_debit: 'BECS Direct Debit',
  acss_debit: 'Pre-authorized debit',
  ideal: 'iDEAL',
  bancontact: 'Bancontact',
  sofort: 'Sofort',
  klarna: 'Klarna',
  affirm: 'Affirm',
  afterpay_clearpay: 'Afterpay / Clearpay',
  paypal: 'PayPal',
  cashapp: 'Cash App Pay',
  customer_balance: 'Bank transfer',
};

/** `sepa_debit` → "SEPA Direct Debit"; an unlisted type is shown with its words ("revolut pay" for revolut_pay). */
export function paymentMethodTitle(type: string | undefined, cardTitle: string): string {
  if (type === undefined || type === 'card') return cardTitle;
  return NAMES[type] ?? type.replaceAll('_', ' ');
}
