// Compiled by tests/unit/storefront-client-types.test.ts (and by `npm run typecheck`): each line fails to
// compile when the client's own types and the service's schemas stop accepting each other's values.
import type { z } from 'zod';
import type * as Client from '@/client/types';
import type { paymentIntentRequestSchema, submitOrderRequestSchema, addressSchema, contactInfoSchema } from '@/lib/checkout/schemas';
import type * as Service from '@/lib/http/responses';
import type * as Express from '@/lib/checkout/express-schemas';

type Assignable<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
// Both ways assignable, and the same keys: an optional field on one side only would pass the first test alone.
type Same<A, B> = Assignable<A, B> extends true ? Assignable<Extract<keyof A, string>, Extract<keyof B, string>> : false;

export const sameTypes: Record<string, true> = {
  address: true satisfies Same<Client.Address, z.input<typeof addressSchema>>,
  contactInfo: true satisfies Same<Client.ContactInfo, z.input<typeof contactInfoSchema>>,
  paymentIntentInput: true satisfies Same<Client.PaymentIntentInput, z.input<typeof paymentIntentRequestSchema>>,
  submitOrderInput: true satisfies Same<Client.SubmitOrderInput, z.input<typeof submitOrderRequestSchema>>,
  paymentIntent: true satisfies Same<Client.PaymentIntent, Service.PaymentIntentResponse>,
  submittedOrder: true satisfies Same<Client.SubmittedOrder, Service.SubmitOrderResponse>,
  validationIssue: true satisfies Same<Client.ValidationIssue, Service.ValidationIssue>,
  invalidRequest: true satisfies Same<Client.InvalidRequestResponse, Service.InvalidRequestResponse>,
  notPayable: true satisfies Same<Client.NotPayableResponse, Service.NotPayableResponse>,
  checkoutFailure: true satisfies Same<Client.CheckoutFailureResponse, Service.CheckoutFailureResponse>,
  checkoutBusy: true satisfies Same<Client.CheckoutBusyResponse, Service.CheckoutBusyResponse>,
  walletAddress: true satisfies Same<Client.WalletAddress, z.input<typeof Express.walletAddressSchema>>,
  shippingRatesInput: true satisfies Same<Client.ShippingRatesInput, z.input<typeof Express.shippingRatesRequestSchema>>,
  shippingRateInput: true satisfies Same<Client.ShippingRateInput, z.input<typeof Express.shippingRateRequestSchema>>,
  sheetLineItem: true satisfies Same<Client.SheetLineItem, Express.SheetLineItem>,
  expressShippingRate: true satisfies Same<Client.ExpressShippingRate, Express.ExpressShippingRate>,
  shippingRates: true satisfies Same<Client.ShippingRates, Express.ShippingRatesResponse>,
  chosenShippingRate: true satisfies Same<Client.ChosenShippingRate, Express.ShippingRateResponse>,
};
