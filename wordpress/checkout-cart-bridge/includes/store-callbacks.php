<?php
/**
 * Checkout Bridge: the calls the shop's admin makes to the checkout
 * service (its docs/decisions.md#d15), POST <service URL>/api/store/<action> with a
 * JSON body signed with the shared secret (with the method and path), and the admin's side of them:
 *
 * - refunds: the gateway's process_refund (class-checkout-cart-bridge-gateway.php);
 * - capture: the "Capture charge" order action, offered when the capture
 *   setting is "manual" on an unpaid order that holds a card payment intent;
 * - cancel-authorization: an order cancelled in the admin releases the
 *   card authorization it holds (capture setting other than "automatic").
 *
 * Without the service URL and the secret nothing is ever sent: the action
 * is not offered and cancelling an order calls nothing.
 *
 * @package CheckoutCartBridge
 */

defined( 'ABSPATH' ) || exit;

/** Where the gateway keeps its settings, whatever the payment method id it is registered under. */
const CHECKOUT_CART_BRIDGE_SETTINGS_OPTION = 'checkout_cart_bridge_settings';

/** The order meta key of the payment intent the checkout handed out (the service writes it). */
const CHECKOUT_CART_BRIDGE_INTENT_META = '_payment_intent_id';

/**
 * One setting of the gateway (WooCommerce → Settings → Payments), readable before
 * the gateway is built. The secret and the service URL may also be defined in
 * wp-config.php (CHECKOUT_CART_BRIDGE_STORE_SECRET, CHECKOUT_CART_BRIDGE_SERVICE_URL),
 * which wins and keeps the secret out of the database.
 *
 * @param string $key     Setting key.
 * @param string $default Value when unset.
 * @return string
 */
function checkout_cart_bridge_setting( $key, $default = '' ) {
	if ( 'secret' === $key && defined( 'CHECKOUT_CART_BRIDGE_STORE_SECRET' ) ) {
		return (string) CHECKOUT_CART_BRIDGE_STORE_SECRET;
	}
	if ( 'service_url' === $key && defined( 'CHECKOUT_CART_BRIDGE_SERVICE_URL' ) ) {
		return (string) CHECKOUT_CART_BRIDGE_SERVICE_URL;
	}
	$settings = get_option( CHECKOUT_CART_BRIDGE_SETTINGS_OPTION, array() );
	$value    = is_array( $settings ) && isset( $settings[ $key ] ) ? trim( (string) $settings[ $key ] ) : '';
	return '' === $value ? $default : $value;
}

/** The payment method id the service writes on card orders (its CARD_PAYMENT_METHOD_ID). */
function checkout_cart_bridge_payment_method_id() {
	$id = preg_replace( '/[^A-Za-z0-9_-]/', '', checkout_cart_bridge_setting( 'payment_method_id', 'cardprovider' ) );
	return (string) apply_filters( 'checkout_cart_bridge_payment_method_id', '' === $id ? 'cardprovider' : $id );
}

/** automatic, on_shipment or manual: the service's STRIPE_CAPTURE, which this setting must mirror. */
function checkout_cart_bridge_capture_mode() {
	$mode = checkout_cart_bridge_setting( 'capture', 'automatic' );
	return in_array( $mode, array( 'automatic', 'on_shipment', 'manual' ), true ) ? $mode : 'automatic';
}

/** Whether the service's URL and the shared secret are both set: without them nothing is sent. */
function checkout_cart_bridge_callbacks_configured() {
	return '' !== checkout_cart_bridge_setting( 'secret' ) && 0 === strpos( checkout_cart_bridge_setting( 'service_url' ), 'http' );
}

/**
 * Signs and sends one call to the service; retries once when no answer came
 * (a network failure or a 5xx), which is safe: each call is idempotent by
 * the store's own id.
 *
 * @param string $action refunds, capture or cancel-authorization.
 * @param array  $data   The JSON body.
 * @return array|WP_Error The service's JSON answer on 200, or a WP_Error with its `error` message.
 */
function checkout_cart_bridge_call_service( $action, array $data ) {
	if ( ! checkout_cart_bridge_callbacks_configured() ) {
		return new WP_Error( 'checkout_bridge_not_configured', __( 'The checkout service URL and shared secret are not set (WooCommerce → Settings → Payments).', 'checkout-cart-bridge' ) );
	}
	$url    = untrailingslashit( checkout_cart_bridge_setting( 'service_url' ) ) . '/api/store/' . $action;
	$body   = wp_json_encode( $data );
	$secret = checkout_cart_bridge_setting( 'secret' );
	$error  = new WP_Error( 'checkout_bridge_unreachable', __( 'The checkout service could not be reached.', 'checkout-cart-bridge' ) );

	for ( $attempt = 1; $attempt <= 2; $attempt++ ) {
		$args     = apply_filters(
			'checkout_cart_bridge_request_args',
			array(
				'timeout'     => 20,
				'redirection' => 0,
				'headers'     => array(
					'Content-Type'      => 'application/json',
					// Signed again on each attempt: the signature's time is part of what the service checks.
					'X-Store-Signature' => checkout_cart_bridge_signature( $secret, time(), 'POST', checkout_cart_bridge_signed_path( $url ), $body ),
				),
				'body'        => $body,
			),
			$action
		);
		$response = wp_remote_post( $url, $args );
		if ( is_wp_error( $response ) ) {
			continue;
		}
		$status = (int) wp_remote_retrieve_response_code( $response );
		$answer = json_decode( wp_remote_retrieve_body( $response ), true );
		if ( 200 === $status && is_array( $answer ) ) {
			return $answer;
		}
		$message = is_array( $answer ) && isset( $answer['error'] ) && is_string( $answer['error'] )
			? $answer['error']
			/* translators: %d: HTTP status code. */
			: sprintf( __( 'The checkout service answered HTTP %d.', 'checkout-cart-bridge' ), $status );
		$error   = new WP_Error( 'checkout_bridge_refused', $message, array( 'status' => $status ) );
		if ( $status < 500 ) {
			break;
		}
	}
	return $error;
}

/** Whether the order holds a card payment intent the checkout handed out and is not paid yet. */
function checkout_cart_bridge_has_open_authorization( $order ) {
	return $order instanceof WC_Order && ! $order->is_paid() && '' !== (string) $order->get_meta( CHECKOUT_CART_BRIDGE_INTENT_META );
}

add_filter( 'woocommerce_order_actions', 'checkout_cart_bridge_order_actions', 10, 2 );

/**
 * "Capture charge" in the order's actions, when capture is manual and the order may hold an authorization.
 *
 * @param array         $actions Order actions.
 * @param WC_Order|null $order   The order being edited (WooCommerce 5.8 and later).
 * @return array
 */
function checkout_cart_bridge_order_actions( $actions, $order = null ) {
	if ( 'manual' === checkout_cart_bridge_capture_mode() && checkout_cart_bridge_callbacks_configured() && checkout_cart_bridge_has_open_authorization( $order ) ) {
		$actions['checkout_cart_bridge_capture'] = __( 'Capture charge', 'checkout-cart-bridge' );
	}
	return $actions;
}

add_action( 'woocommerce_order_action_checkout_cart_bridge_capture', 'checkout_cart_bridge_capture_charge' );

/**
 * Captures the order's authorized card payment; the order is marked paid when the
 * service records Stripe's payment event. The outcome is a private order note.
 *
 * @param WC_Order $order The order.
 */
function checkout_cart_bridge_capture_charge( $order ) {
	$answer = checkout_cart_bridge_call_service( 'capture', array( 'order_id' => (int) $order->get_id() ) );
	if ( is_wp_error( $answer ) ) {
		/* translators: %s: the service's explanation. */
		$order->add_order_note( sprintf( __( 'The charge was not captured: %s', 'checkout-cart-bridge' ), $answer->get_error_message() ) );
		return;
	}
	/* translators: 1: amount, 2: currency. */
	$order->add_order_note( sprintf( __( 'Charge captured: %1$s %2$s.', 'checkout-cart-bridge' ), sanitize_text_field( (string) $answer['captured'] ), $order->get_currency() ) );
}

add_action( 'woocommerce_order_status_cancelled', 'checkout_cart_bridge_release_authorization', 10, 2 );

/**
 * An order cancelled in the admin releases its card authorization at once
 * instead of holding the customer's money until it lapses.
 *
 * @param int           $order_id The order id.
 * @param WC_Order|null $order    The order.
 */
function checkout_cart_bridge_release_authorization( $order_id, $order = null ) {
	if ( 'automatic' === checkout_cart_bridge_capture_mode() || ! checkout_cart_bridge_callbacks_configured() ) {
		return;
	}
	$order = $order instanceof WC_Order ? $order : wc_get_order( $order_id );
	if ( ! checkout_cart_bridge_has_open_authorization( $order ) ) {
		return;
	}
	$answer = checkout_cart_bridge_call_service( 'cancel-authorization', array( 'order_id' => (int) $order->get_id() ) );
	if ( is_wp_error( $answer ) ) {
		/* translators: %s: the service's explanation. */
		$order->add_order_note( sprintf( __( 'The card authorization was not released: %s', 'checkout-cart-bridge' ), $answer->get_error_message() ) );
	} elseif ( ! empty( $answer['canceled'] ) ) {
		$order->add_order_note( __( 'The card authorization was released: the customer is not charged.', 'checkout-cart-bridge' ) );
	}
}
