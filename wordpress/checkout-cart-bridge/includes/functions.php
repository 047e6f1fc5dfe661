<?php
/**
 * Checkout Bridge: the plugin's pure functions, with no WordPress call,
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
 * The path a call's signature covers: the URL's path, without query string.
 *
 * @param string $url The URL the call is sent to.
 * @return string
 */
function checkout_cart_bridge_signed_path( $url ) {
	$path = parse_url( $url, PHP_URL_PATH );
	return is_string( $path ) && '' !== $path ? $path : '/';
}

/**
 * The X-Store-Signature header the service checks (its docs/decisions.md#d15):
 * t=<unix seconds>,v2=<hex HMAC-SHA256 of "<t>.<METHOD> <path>.<raw body>">.
 * The method and path bind the body to its action (since 1.3.0; v1 signed the body alone).
 *
 * @param string $secret    STORE_CALLBACK_SECRET, shared with the service.
 * @param int    $timestamp Unix seconds; the service accepts five minutes either way.
 * @param string $method    The HTTP method, e.g. POST.
 * @param string $path      The path the call is sent to, e.g. /api/store/capture (checkout_cart_bridge_signed_path).
 * @param string $body      The exact bytes sent as the request body.
 * @return string
 */
function checkout_cart_bridge_signature( $secret, $timestamp, $method, $path, $body ) {
	$timestamp = (string) (int) $timestamp;
	$payload   = $timestamp . '.' . strtoupper( $method ) . ' ' . $path . '.' . $body;
	return 't=' . $timestamp . ',v2=' . hash_hmac( 'sha256', $payload, $secret );
}
