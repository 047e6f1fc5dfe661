// The service's request and response bodies, written out so the package needs nothing from the service;
// tests/unit/storefront-client-types.test.ts holds them equal to the service's zod schemas.

/** An address as the service writes it to the order; any other key is dropped by the service. */
export type Address = {
  first_name?: string;
  last_name?: string;
  company?: string;
  address_1?: string;
  address_2?: string;
  city?: string;
  state?: string;
  postcode?: string;
  /** Two letters (ISO 3166-1 alpha-2). */
  country?: string;
  /** '' only when `contact_info.email` replaces it. */
  email?: string;
  phone?: string;
};

/** Added to the billing address. */
export type ContactInfo = {
  email?: string;
  phone?: string;
};

/** What createPaymentIntent sends: `token` is the order's checkout token. */
export type PaymentIntentInput = {
  token: string;
  billing_address?: Address;
  /** null: ship to the billing address. */
  shipping_address?: Address | null;
  contact_info?: ContactInfo;
  /** The customer ticked "save this card": a registered customer's card is saved to their Stripe Customer once paid. */
  save_payment_method?: boolean;
};

/** What submitOrder sends: `token` and `billing_address` are required. */
export type SubmitOrderInput = {
  token: string;
  billing_address: Address;
  /** Absent or null: ship to the billing address. */
  shipping_address?: Address | null;
  contact_info?: ContactInfo;
};

export type PaymentIntent = {
  success: true;
  /** Hand it to Stripe.js (Payment Element) to confirm the payment. */
  client_secret: string;
  payment_intent_id: string;
  /** A registered customer's Stripe Customer Session: pass it to Elements as `customerSessionClientSecret` to list their saved cards. Absent for a guest. */
  customer_session_client_secret?: string;
};

export type SubmittedOrder = {
  success: true;
  order_id: number;
  /** The order total in minor units (cents), computed on the server. */
  total: number;
  currency: string;
};

/** The partial address a wallet reports before the customer authorizes (Stripe's names; the postal code may be cut short). */
export type WalletAddress = {
  /** Two letters (ISO 3166-1 alpha-2), required. */
  country: string;
  state?: string;
  postal_code?: string;
  city?: string;
};

/** What shippingRates sends: the wallet's address on `shippingaddresschange`. */
export type ShippingRatesInput = {
  token: string;
  address: WalletAddress;
};

/** What chooseShippingRate sends: a rate id of shippingRates' answer at the same address. */
export type ShippingRateInput = {
  token: string;
  shipping_rate_id: string;
  address: WalletAddress;
};

/** One line of the wallet's sheet (the Express Checkout Element's `lineItems`); the lines add up to the total. */
export type SheetLineItem = {
  name: string;
  /** Minor units (cents). */
  amount: number;
};

export type ExpressShippingRate = {
  /** WooCommerce's rate id (`flat_rate:3`): send it back to choose the rate. */
  id: string;
  label: string;
  /** The rate with its tax, in minor units, as the wallet lists it. */
  amount: number;
  /** The order's total with this rate at this address, in minor units. */
  total: number;
  line_items: SheetLineItem[];
};

export type ShippingRates = {
  success: true;
  /** Lower-case ISO code, as Stripe.js takes it. */
  currency: string;
  /** Empty when no shipping method serves the address: reject it in the wallet. */
  shipping_rates: ExpressShippingRate[];
};

export type ChosenShippingRate = {
  success: true;
  currency: string;
  /** The order's total as the store recalculated it, in minor units: the sheet's amount (`elements.update({ amount: total })`). */
  total: number;
  shipping_rate: { id: string; label: string; amount: number };
  line_items: SheetLineItem[];
};

/** One zod issue of a 400 `details`; zod adds fields per issue code. */
export type ValidationIssue = {
  code: string;
  path: (string | number)[];
  message: string;
  [field: string]: unknown;
};

export type InvalidRequestResponse = {
  error: 'Invalid request';
  details: ValidationIssue[];
};

export type NotPayableReason = 'Order is already paid' | 'Order status is not pending';

export type NotPayableResponse = {
  error: 'Order cannot be paid' | 'Order cannot be submitted for payment';
  details: { orderId: number; status: string; reason: NotPayableReason };
};

export type CheckoutFailureResponse = {
  success: false;
  error: {
    code: 'PAYMENT_INTENT_ERROR' | 'SUBMIT_ORDER_ERROR' | 'EXPRESS_CHECKOUT_ERROR';
    message: string;
    /** Present only in a development environment. */
    details?: unknown;
  };
};

export type CheckoutBusyResponse = {
  success: false;
  error: {
    code: 'SHOP_BUSY';
    message: 'The shop is busy, try again in a few seconds';
    retry_after_seconds: number;
  };
};
