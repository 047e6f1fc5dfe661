<?php
/**
 * Checkout Cart Bridge: the plugin's pure functions, with no WordPress call,
 * so a test can run them with php alone (tests/unit/store-signature.test.ts).
 *
 * @package CheckoutCartBridge
 */

defined( 'ABSPATH' ) || exit;

/**
 * Whether a request argument names a WordPress id: a positive integer, given
 * as a JSON integer or as a string of decimal digits. Nothing is coerced:
 * absint() would turn -7 into order 7 and "abc" into 0.
 *
 * @param mixed $value The argument as the request carries it.
 * @return bool
 */
function checkout_cart_bridge_is_positive_id( $value ) {
	if ( is_int( $value ) ) {
		return $value > 0;
	}
	if ( ! is_string( $value ) || 1 !== preg_match( '/^[1-9][0-9]{0,17}$/', $value ) ) {
		return false;
	}
	return (string) (int) $value === $value;
}

/**
 * The X-Store-Signature header the service checks (its docs/decisions.md#d15, Stripe's
 * webhook scheme): t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">.
 *
 * @param string $secret    STORE_CALLBACK_SECRET, shared with the service.
 * @param int    $timestamp Unix seconds; the service accepts five minutes either way.
 * @param string $body      The exact bytes sent as the request body.
 * @return string
 */
function checkout_cart_bridge_signature( $secret, $timestamp, $body ) {
	$timestamp = (string) (int) $timestamp;
	return 't=' . $timestamp . ',v1=' . hash_hmac( 'sha256', $timestamp . '.' . $body, $secret );
}
