/**
 * The service's OpenAPI 3.1 document, every body generated from the zod schemas that validate the requests
 * and describe the responses (components.ts), written to docs/openapi.json by `npm run openapi`; the service
 * serves that file (a test fails while it differs from what this builds).
 */
import { CHECKOUT_BODY_LIMIT, WEBHOOK_BODY_LIMIT } from '@/lib/http/body';
import { componentSchemas, json, type ComponentName, type JsonObject } from './components';
import { RATE_LIMITS, type RateLimitRule } from '@/lib/shared-state/rate-limit';
import { STORE_SIGNATURE_HEADER, STORE_SIGNATURE_TOLERANCE_SECONDS } from '@/lib/security/store-signature';
import { SIGNATURE_HEADERS } from '@/lib/webhooks/card/event';
import { SECRET_HEADER, SECRET_QUERY_PARAMETER } from '@/lib/webhooks/shipping/secret';

const tooLarge = (limit: number) => ({ description: `The body is larger than ${limit / 1024} KiB.`, ...json('PayloadTooLarge') });
const header = (name: string) => ({ $ref: `#/components/headers/${name}` });
const storefront = () => ({ tags: ['storefront'], parameters: [{ $ref: '#/components/parameters/Origin' }] });
const ruleText = (rule: RateLimitRule) => `More than ${rule.limit} requests in ${rule.windowMs / 1000} s from this client`;

/** What an operation says of itself, and its request and success bodies. */
interface Operation {
  operationId: string;
  summary: string;
  description: string;
  request: ComponentName;
  success: ComponentName;
}

interface CheckoutOperation extends Operation {
  errorCode: string;
  notPayableMessage?: string;
  rule?: RateLimitRule;
}

/** A storefront path: its POST and the CORS preflight before it. */
function checkoutPath(preflightId: string, operation: CheckoutOperation): JsonObject {
  const { request, success, errorCode, notPayableMessage = 'Order cannot be paid', rule = RATE_LIMITS.paymentIntent, ...named } = operation;
  const post = {
    ...named,
    ...storefront(),
    requestBody: { required: true, ...json(request) },
    responses: {
      '200': { description: 'Success.', headers: { 'Access-Control-Allow-Origin': header('AllowOrigin') }, ...json(success) },
      '400': {
        description: `The body fails validation or did not arrive whole (\`Invalid request\`), or the order cannot be paid (\`${notPayableMessage}\`, with the reason).`,
        ...json('InvalidRequest', 'NotPayable'),
      },
      '413': tooLarge(CHECKOUT_BODY_LIMIT),
      '429': {
        description: `${ruleText(rule)}.`,
        headers: Object.fromEntries(['Limit', 'Remaining', 'Reset'].map((part) => [`X-RateLimit-${part}`, header(`RateLimit${part}`)])),
        ...json('CheckoutRateLimited'),
      },
      '500': {
        description: `Any other failure, with \`code\` = \`${errorCode}\`: origin not allowed, token invalid or expired, the store or the card provider failing. \`details\` only in development.`,
        ...json('CheckoutFailure'),
      },
      '503': {
        description:
          'The shop is busy: every slot of the store (STORE_MAX_CONCURRENCY) stayed taken for a moment, so nothing was read or written. ' +
          'Show `message` to the customer and send the same call again after `Retry-After` seconds (1 to 3); the storefront client does so once by itself.',
        headers: { 'Retry-After': header('RetryAfter') },
        ...json('CheckoutBusy'),
      },
    },
  };
  const options = {
    operationId: preflightId,
    summary: 'CORS preflight',
    ...storefront(),
    responses: {
      '204': {
        description: 'The origin is allowed: the CORS grant for POST with Content-Type.',
        headers: { 'Access-Control-Allow-Origin': header('AllowOrigin') },
      },
      '403': { description: 'The origin is not allowed: no CORS grant.' },
    },
  };
  return { post, options };
}

function cardWebhookOperation(operationId: string, alias: boolean): JsonObject {
  return {
    operationId,
    summary: alias ? 'Card provider events (Stripe’s usual URL)' : 'Card provider events',
    description:
      'Signed events from the card provider (Stripe). The raw body is verified against the signature header ' +
      `(\`${SIGNATURE_HEADERS.join('` or `')}\`; one of them is required) before anything is read. ` +
      '`payment_intent.succeeded` and `payment_intent.payment_failed` update the order, and with CARD_LIFECYCLE_EVENTS the refund, ' +
      'dispute and `payment_intent.processing` events of each enabled word (README, Stripe webhook); every other accepted event is acknowledged. ' +
      'Each event is a transition of the order\'s payment model: reviews and disputes are recorded whenever they arrive, and an event older than what the order holds changes nothing. ' +
      'A refund before its payment is recorded, or while a refund from the admin is still settling, is answered 400 for a retry.' +
      (alias ? ' Same handler and rate-limit counter as /api/cardprovider/webhook.' : ''),
    tags: ['webhooks'],
    parameters: SIGNATURE_HEADERS.map((name) => ({
      name,
      in: 'header',
      required: false,
      description: 'The provider’s signature of the raw body (`t=…,v1=…`).',
      schema: { type: 'string' },
    })),
    requestBody: {
      required: true,
      description: 'A card provider event, as sent (its exact bytes are signed).',
      content: { 'application/json': { schema: { type: 'object' } } },
    },
    responses: {
      '200': { description: 'Accepted, including events that are not handled and orders left unchanged.', ...json('Received') },
      '400': { description: '`Missing signature`, a signature that does not verify, or a failure to apply the event: the provider retries.', ...json('CardWebhookError') },
      '413': tooLarge(WEBHOOK_BODY_LIMIT),
      '429': { description: `${ruleText(RATE_LIMITS.cardWebhook)} (no rate-limit headers).`, ...json('WebhookRateLimited') },
    },
  };
}

function shippingWebhookOperation(operationId: string, alias: boolean): JsonObject {
  return {
    operationId,
    summary: alias ? 'Shipment notifications (ShipStation’s name)' : 'Shipment notifications',
    description:
      '`SHIP_NOTIFY`, `ITEM_SHIPPED` (and ShipStation’s `ITEM_SHIP_NOTIFY`) mark a `processing` or `awaiting_shipment` order `shipped`; ' +
      'a payload with only `resource_url` is read from ShipStation. ShipStation V2 deliveries (`FULFILLMENT_SHIPPED_V2`, `LABEL_CREATED_V2`, `TRACK_EVENT_V2`) are verified by their RSA-SHA256 signature instead of the shared secret. ' +
      'An invalid payload and every failure are acknowledged with 200 so they are not retried.' +
      (alias ? ' Same handler and rate-limit counter as /api/shipping/webhook.' : ''),
    tags: ['webhooks'],
    security: [{ ShippingSecretQuery: [] }, { ShippingSecretHeader: [] }, {}],
    requestBody: { required: true, ...json('ShippingNotification') },
    responses: {
      '200': { description: 'Acknowledged, whatever the outcome.', ...json('Received') },
      '400': {
        description:
          'The body did not arrive whole (shorter than its Content-Length, or the connection failed mid-body): deliver it again. ' +
          'Or a ShipStation V2 delivery whose signature does not hold: a timestamp more than 5 minutes off, a key id ShipStation does not publish, or a signature that does not verify.',
        ...json('CardWebhookError'),
      },
      '401': { description: 'A shared secret is configured and the delivery does not carry it.', ...json('Unauthorized') },
      '404': { description: 'A ShipStation V2 delivery (a `*_V2` type, or some of its signature headers) without its whole RSA-SHA256 signature.', ...json('CardWebhookError') },
      '503': { description: 'ShipStation V2’s signing keys could not be read: deliver it again.', ...json('CardWebhookError') },
      '413': tooLarge(WEBHOOK_BODY_LIMIT),
      '429': { description: `${ruleText(RATE_LIMITS.shippingWebhook)}.`, ...json('WebhookRateLimited') },
    },
  };
}

function storeCallbackOperation({ request, success, ...named }: Operation): JsonObject {
  return {
    ...named,
    tags: ['store'],
    security: [{ StoreSignature: [] }],
    requestBody: { required: true, ...json(request) },
    responses: {
      '200': { description: 'Done, or done before (the call is idempotent).', ...json(success) },
      '400': {
        description: 'The body fails validation, an unknown key included (`Invalid request`), or the service will not do it: `error` says why, in words for the shop owner.',
        ...json('InvalidRequest', 'StoreCallbackError'),
      },
      '401': { description: 'The signature is missing, wrong (another action’s, another body’s), or more than five minutes old or ahead.', ...json('Unauthorized') },
      '409': { description: 'Another request is changing the order: try again.', ...json('StoreCallbackError') },
      '413': tooLarge(CHECKOUT_BODY_LIMIT),
      '502': { description: 'Stripe or the store did not answer: try again (a retry never does it twice).', ...json('StoreCallbackError') },
      '503': { description: 'STORE_CALLBACK_SECRET is not set: nothing is done.', ...json('StoreCallbackError') },
    },
  };
}

const CHECKOUT_OPERATIONS: [path: string, preflightId: string, CheckoutOperation][] = [
  ['/api/payment-intent', 'paymentIntentPreflight', {
    operationId: 'createPaymentIntent',
    summary: 'Create or reuse the card payment intent of a pending order',
    description:
      'Writes the customer’s addresses and contact details onto the order, then returns the client secret of a payment intent ' +
      'for the order’s total. The token is not consumed: the call may be repeated until the payment succeeds.',
    request: 'PaymentIntentRequest',
    success: 'PaymentIntentResponse',
    errorCode: 'PAYMENT_INTENT_ERROR',
  }],
  ['/api/submit-order', 'submitOrderPreflight', {
    operationId: 'submitOrder',
    summary: 'Submit a pending order for manual payment',
    description: 'Writes the addresses and marks the order as awaiting a payment screenshot.',
    request: 'SubmitOrderRequest',
    success: 'SubmitOrderResponse',
    errorCode: 'SUBMIT_ORDER_ERROR',
    notPayableMessage: 'Order cannot be submitted for payment',
  }],
  ['/api/express-checkout/shipping-rates', 'shippingRatesPreflight', {
    operationId: 'quoteShippingRates',
    summary: 'The order’s shipping rates at the address a wallet reports',
    description:
      'For the Express Checkout Element’s `shippingaddresschange`: the store’s own rates (zones, methods, classes, free-shipping ' +
      'thresholds) at a partial address, each with the order’s total there. Changes nothing.',
    request: 'ShippingRatesRequest',
    success: 'ShippingRatesResponse',
    errorCode: 'EXPRESS_CHECKOUT_ERROR',
    rule: RATE_LIMITS.shippingRates,
  }],
  ['/api/express-checkout/shipping-rate', 'shippingRatePreflight', {
    operationId: 'chooseShippingRate',
    summary: 'Write the wallet’s chosen rate and address to the order',
    description:
      'For `shippingratechange` (and the first rate of a new address): the rate, priced by the store at this address (a rate it does not ' +
      'offer there is a 400), becomes the order’s shipping line; the store recalculates totals and taxes and the payment intent, when the ' +
      'order has one, is brought to the new total. The intent’s own `shipping` is never set: the wallet’s confirmation sends it. ' +
      'POST /api/payment-intent with the wallet’s full details stays the last call before confirming.',
    request: 'ShippingRateRequest',
    success: 'ShippingRateResponse',
    errorCode: 'EXPRESS_CHECKOUT_ERROR',
    rule: RATE_LIMITS.shippingRate,
  }],
];

const STORE_OPERATIONS: [path: string, Operation][] = [
  ['/api/store/refunds', {
    operationId: 'refundFromStore',
    summary: 'Refund a card payment from the WooCommerce admin',
    description:
      'Sent by the Checkout Bridge plugin’s gateway when the shop owner clicks “Refund via …”. Refunds the WooCommerce refund’s amount ' +
      '(read from the store, in the order’s currency) at Stripe, with the order and the WooCommerce refund in the refund’s metadata; ' +
      'a retry for the same WooCommerce refund answers the refund already made. Orders not paid by card are refused.',
    request: 'StoreRefundRequest',
    success: 'StoreRefund',
  }],
  ['/api/store/capture', {
    operationId: 'captureFromStore',
    summary: 'Capture an authorized card payment (STRIPE_CAPTURE=manual)',
    description:
      'Sent by the plugin’s “Capture charge” order action. Captures the order’s total as the store holds it (never more than was ' +
      'authorized); the payment is then recorded by `payment_intent.succeeded`. An order already captured answers its amount.',
    request: 'StoreOrderRequest',
    success: 'StoreCapture',
  }],
  ['/api/store/cancel-authorization', {
    operationId: 'cancelAuthorizationFromStore',
    summary: 'Release the card authorization of a cancelled order',
    description:
      'Sent by the plugin when an order is cancelled in the admin. Cancels an authorization that was not captured; ' +
      '`canceled: false` when the order holds none. A captured payment is refused: refund it instead.',
    request: 'StoreOrderRequest',
    success: 'StoreCancelAuthorization',
  }],
];

export function buildOpenApiDocument(): JsonObject {
  return {
    openapi: '3.1.0',
    info: {
      title: 'Checkout payment service',
      version: '0.1.0',
      description:
        'Card and manual payments for headless WooCommerce orders, and shipment notifications. ' +
        'Amounts are integers in the currency’s minor unit, always computed on the server from the store order.',
    },
    tags: [
      { name: 'storefront', description: 'Called by the storefront (browser or server), with the checkout token of one order.' },
      { name: 'webhooks', description: 'Called by the card and shipping providers.' },
      { name: 'store', description: 'Called by the store’s Checkout Bridge plugin for what a shop owner does in the WooCommerce admin.' },
    ],
    paths: {
      ...Object.fromEntries(CHECKOUT_OPERATIONS.map(([path, preflightId, operation]) => [path, checkoutPath(preflightId, operation)])),
      '/api/cardprovider/webhook': { post: cardWebhookOperation('receiveCardEvent', false) },
      '/api/stripe/webhook': { post: cardWebhookOperation('receiveStripeEvent', true) },
      '/api/shipping/webhook': { post: shippingWebhookOperation('receiveShipmentNotification', false) },
      '/api/shipstation/webhook': { post: shippingWebhookOperation('receiveShipStationNotification', true) },
      ...Object.fromEntries(STORE_OPERATIONS.map(([path, operation]) => [path, { post: storeCallbackOperation(operation) }])),
    },
    components: {
      schemas: componentSchemas(),
      parameters: {
        Origin: {
          name: 'Origin',
          in: 'header',
          required: false,
          description: 'Must be one of the storefront origins the service is configured with (else `Referer`’s origin is used).',
          schema: { type: 'string' },
        },
      },
      headers: {
        AllowOrigin: { description: 'The request’s origin, when it is allowed.', schema: { type: 'string' } },
        RateLimitLimit: { required: true, description: 'Requests allowed per window.', schema: { type: 'string', pattern: '^\\d+$' } },
        RateLimitRemaining: { required: true, description: 'Always `0` on a 429.', schema: { type: 'string', const: '0' } },
        RateLimitReset: { required: true, description: 'When the window ends (ISO 8601).', schema: { type: 'string', format: 'date-time' } },
        RetryAfter: { required: true, description: 'Seconds to wait before sending the call again.', schema: { type: 'string', pattern: '^[1-9]\\d*$' } },
      },
      securitySchemes: {
        ShippingSecretQuery: {
          type: 'apiKey',
          in: 'query',
          name: SECRET_QUERY_PARAMETER,
          description: 'The shared secret (`SHIPPING_WEBHOOK_SECRET`) in the subscribed URL, as ShipStation cannot send headers.',
        },
        ShippingSecretHeader: { type: 'apiKey', in: 'header', name: SECRET_HEADER, description: 'The shared secret as a header.' },
        StoreSignature: {
          type: 'apiKey',
          in: 'header',
          name: STORE_SIGNATURE_HEADER,
          description:
            '`t=<unix seconds>,v2=<hex HMAC-SHA256 of "<t>.<METHOD> <path>.<raw body>" keyed with STORE_CALLBACK_SECRET>`, ' +
            'the path the request is sent to without its query string (`1764150000.POST /api/store/capture.{"order_id":42}`), ' +
            `accepted within ${STORE_SIGNATURE_TOLERANCE_SECONDS / 60} minutes of the service’s clock. Several \`v2\` are accepted ` +
            '(one per secret while it changes); other keys are ignored, and a header without a valid `v2` (the body-only `v1`) is refused.',
        },
      },
    },
  };
}
