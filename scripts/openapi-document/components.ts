/** The components of the OpenAPI document: the request and response zod schemas as JSON Schema, and references to them. */
import { z } from 'zod';
import { addressSchema, contactInfoSchema, paymentIntentRequestSchema, submitOrderRequestSchema } from '@/lib/checkout/schemas';
import * as express from '@/lib/checkout/express-schemas';
import * as responses from '@/lib/http/responses';
import { storeOrderRequestSchema, storeRefundRequestSchema } from '@/lib/store-callbacks/schemas';
import { shippingPayloadSchema } from '@/lib/webhooks/shipping/payload';

export type JsonObject = Record<string, unknown>;

/** Requests are described as clients send them (zod's input), responses as the service writes them (output). */
const REQUEST_SCHEMAS = {
  Address: addressSchema,
  ContactInfo: contactInfoSchema,
  PaymentIntentRequest: paymentIntentRequestSchema,
  SubmitOrderRequest: submitOrderRequestSchema,
  ShippingRatesRequest: express.shippingRatesRequestSchema,
  ShippingRateRequest: express.shippingRateRequestSchema,
  ShippingNotification: shippingPayloadSchema,
  StoreRefundRequest: storeRefundRequestSchema,
  StoreOrderRequest: storeOrderRequestSchema,
} satisfies Record<string, z.ZodType>;

const RESPONSE_SCHEMAS = {
  PaymentIntentResponse: responses.paymentIntentResponseSchema,
  SubmitOrderResponse: responses.submitOrderResponseSchema,
  ShippingRatesResponse: express.shippingRatesResponseSchema,
  ShippingRateResponse: express.shippingRateResponseSchema,
  Received: responses.receivedResponseSchema,
  ValidationIssue: responses.validationIssueSchema,
  InvalidRequest: responses.invalidRequestResponseSchema,
  NotPayable: responses.notPayableResponseSchema,
  CheckoutRateLimited: responses.checkoutRateLimitedResponseSchema,
  CheckoutFailure: responses.checkoutFailureResponseSchema,
  CheckoutBusy: responses.checkoutBusyResponseSchema,
  PayloadTooLarge: responses.payloadTooLargeResponseSchema,
  WebhookRateLimited: responses.webhookRateLimitedResponseSchema,
  CardWebhookError: responses.cardWebhookErrorResponseSchema,
  Unauthorized: responses.unauthorizedResponseSchema,
  StoreRefund: responses.storeRefundResponseSchema,
  StoreCapture: responses.storeCaptureResponseSchema,
  StoreCancelAuthorization: responses.storeCancelAuthorizationResponseSchema,
  StoreCallbackError: responses.storeCallbackErrorResponseSchema,
} satisfies Record<string, z.ZodType>;

export type ComponentName = keyof typeof REQUEST_SCHEMAS | keyof typeof RESPONSE_SCHEMAS;

function generated(schemas: Record<string, z.ZodType>, io: 'input' | 'output'): Record<string, JsonObject> {
  const registry = z.registry<{ id: string }>();
  for (const [id, schema] of Object.entries(schemas)) registry.add(schema, { id });
  const generated = z.toJSONSchema(registry, {
    io,
    target: 'draft-2020-12',
    uri: (id) => `#/components/schemas/${id}`,
  }) as { schemas: Record<string, JsonObject> };
  // Inside an OpenAPI document the dialect is the document's own, and a component is named by its key.
  return Object.fromEntries(
    Object.entries(generated.schemas).map(([id, { $schema: _dialect, $id: _id, ...schema }]) => [id, schema]),
  );
}

export const ref = (name: ComponentName) => ({ $ref: `#/components/schemas/${name}` });
/** A JSON body of one component, or of one of several. */
export const json = (...names: [ComponentName, ...ComponentName[]]) => ({
  content: { 'application/json': { schema: names.length === 1 ? ref(names[0]) : { oneOf: names.map(ref) } } },
});

export const componentSchemas = (): Record<string, JsonObject> => ({
  ...generated(REQUEST_SCHEMAS, 'input'),
  ...generated(RESPONSE_SCHEMAS, 'output'),
});
