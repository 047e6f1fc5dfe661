/** Every order meta key the service writes (docs/contract.md#order-writes-what-each-transition-writes). */
export const META = {
  // payment-intent
  paymentIntentId: '_payment_intent_id',
  checkoutAddressUpdated: '_checkout_address_updated',
  // express shipping-rate: the chosen rate and the destination the store priced it at
  expressShippingDestination: '_express_shipping_destination',
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
  // beyond the spec's table: lifecycle events, captures, packages, the kept note, the payment facts
  deliveredAt: '_delivered_at',
  datePaidInternal: '_date_paid',
  paymentProcessingAt: '_payment_processing_at',
  // `_status_before_*`: written before the payment model, now read only to rebuild its facts.
  disputeId: '_dispute_id',
  statusBeforeDispute: '_status_before_dispute',
  disputeStatus: '_dispute_status',
  reviewId: '_review_id',
  statusBeforeReview: '_status_before_review',
  reviewClosedReason: '_review_closed_reason',
  providerRefundId: '_provider_refund_id',
  paymentAuthorizedAt: '_payment_authorized_at',
  shipmentPackages: '_shipment_packages',
  shipmentTrackingItems: '_wc_shipment_tracking_items',
  customerNoteAtCheckout: '_customer_note_at_checkout',
} as const;
