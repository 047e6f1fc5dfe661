/**
 * Every order meta key the service writes, in one place, in the order of
 * docs/contract.md#spec-2-1's table, then the keys the card lifecycle events add
 * (CARD_LIFECYCLE_EVENTS, docs/integrations/stripe.md). Values are strings, but for `_wc_shipment_tracking_items`.
 */
export const META = {
  // payment-intent
  paymentIntentId: '_payment_intent_id',
  checkoutAddressUpdated: '_checkout_address_updated',
  // card webhook, success
  providerPaymentIntentId: '_provider_payment_intent_id',
  providerChargeId: '_provider_charge_id',
  paidDate: '_paid_date',
  paymentMethod: '_payment_method',
  paymentMethodTitle: '_payment_method_title',
  transactionId: '_transaction_id',
  // submit-order
  manualPaymentStatus: '_manual_payment_status',
  orderSubmittedAt: '_order_submitted_at',
  // card webhook, failure
  paymentFailedAt: '_payment_failed_at',
  paymentError: '_payment_error',
  cartRestoredOnFailure: '_cart_restored_on_failure',
  // shipping webhook
  trackingNumber: '_tracking_number',
  shippingCarrier: '_shipping_carrier',
  shippedDate: '_shipped_date',
  shipstationWebhookReceivedAt: '_shipstation_webhook_received_at',
  // Not in docs/contract.md#spec-2-1: when ShipStation V2 tracking reported the order delivered (its receipt).
  deliveredAt: '_delivered_at',
  // Not in docs/contract.md#spec-2-1: WooCommerce's internal paid date (Unix seconds), see payment-succeeded.ts.
  datePaidInternal: '_date_paid',
  // CARD_LIFECYCLE_EVENTS=async: the payment is on its way (a bank debit), ISO 8601 timestamp.
  paymentProcessingAt: '_payment_processing_at',
  // CARD_LIFECYCLE_EVENTS=disputes: the dispute last heard of. (`_status_before_*`: written before the payment model, read to rebuild its facts.)
  disputeId: '_dispute_id',
  statusBeforeDispute: '_status_before_dispute',
  // CARD_LIFECYCLE_EVENTS=disputes: `won`, `lost`… once the dispute is closed.
  disputeStatus: '_dispute_status',
  // CARD_LIFECYCLE_EVENTS=reviews: the Radar review last opened or closed on the order, and its closing reason.
  reviewId: '_review_id',
  statusBeforeReview: '_status_before_review',
  reviewClosedReason: '_review_closed_reason',
  // CARD_LIFECYCLE_EVENTS=refunds, on each WooCommerce refund (not the order): the Stripe refund it records.
  providerRefundId: '_provider_refund_id',
  // STRIPE_CAPTURE other than automatic: when the card was authorized (ISO 8601); the payment is not recorded yet.
  paymentAuthorizedAt: '_payment_authorized_at',
  // Every package ShipStation reported for the order (JSON array of {shipment_id, tracking_number, carrier,
  // ship_date, voided}): the receipt that applies each shipment once.
  shipmentPackages: '_shipment_packages',
  // SHIPMENT_TRACKING_META: WooCommerce Shipment Tracking's list (an array value, not a string).
  shipmentTrackingItems: '_wc_shipment_tracking_items',
  // Not in docs/contract.md#spec-2-1: what the customer wrote in customer_note at checkout, kept by the update that replaced it.
  customerNoteAtCheckout: '_customer_note_at_checkout',
  // Not in docs/contract.md#spec-2-1: the order's payment facts (lib/orders/payment-state.ts), JSON, written with each card event's change.
  paymentState: '_cardprovider_payment',
} as const;
