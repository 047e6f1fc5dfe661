<?php
/**
 * Checkout Bridge: one Stripe Customer per registered customer, shared with the official
 * WooCommerce Stripe gateway. The gateway keeps the id with update_user_option() under the
 * site's table prefix (`wp__stripe_customer_id`), a key WooCommerce's customers REST API never
 * shows (WC_Customer_Data_Store::exclude_internal_meta_keys); the service reads and writes
 * `_stripe_customer_id` through that API (its docs/decisions.md, D41).
 *
 * @package CheckoutCartBridge
 */

defined( 'ABSPATH' ) || exit;

const CHECKOUT_CART_BRIDGE_STRIPE_CUSTOMER_META = '_stripe_customer_id';

add_filter( 'is_protected_meta', 'checkout_cart_bridge_unprotect_stripe_customer', 10, 3 );
add_filter( 'woocommerce_rest_prepare_customer', 'checkout_cart_bridge_show_stripe_customer', 10, 2 );
add_action( 'added_user_meta', 'checkout_cart_bridge_mirror_stripe_customer', 10, 4 );
add_action( 'updated_user_meta', 'checkout_cart_bridge_mirror_stripe_customer', 10, 4 );

/**
 * WooCommerce's customers REST API skips protected (underscored) meta on read and on write, so the
 * service's PUT of `_stripe_customer_id` would be dropped without an error. Only this key, only over REST.
 *
 * @param bool   $protected Whether WordPress treats the key as protected.
 * @param string $meta_key  Meta key.
 * @param string $meta_type Object type of the meta.
 * @return bool
 */
function checkout_cart_bridge_unprotect_stripe_customer( $protected, $meta_key, $meta_type = '' ) {
	if ( 'user' === $meta_type && CHECKOUT_CART_BRIDGE_STRIPE_CUSTOMER_META === $meta_key && defined( 'REST_REQUEST' ) && REST_REQUEST ) {
		return false;
	}
	return $protected;
}

/**
 * The REST answer's `_stripe_customer_id` is the one the gateway uses: get_user_option() reads
 * the prefixed key first, then the plain one.
 *
 * @param WP_REST_Response $response The customer as the REST API answers it.
 * @param WP_User          $user     The customer's user.
 * @return WP_REST_Response
 */
function checkout_cart_bridge_show_stripe_customer( $response, $user ) {
	if ( ! $response instanceof WP_REST_Response || ! $user instanceof WP_User ) {
		return $response;
	}
	$stripe_customer = get_user_option( CHECKOUT_CART_BRIDGE_STRIPE_CUSTOMER_META, $user->ID );
	$data            = $response->get_data();
	if ( ! is_string( $stripe_customer ) || '' === $stripe_customer || ! isset( $data['meta_data'] ) || ! is_array( $data['meta_data'] ) ) {
		return $response;
	}
	$meta = array();
	$id   = 0;
	foreach ( $data['meta_data'] as $entry ) {
		$fields = $entry instanceof WC_Meta_Data ? $entry->get_data() : (array) $entry;
		if ( isset( $fields['key'] ) && CHECKOUT_CART_BRIDGE_STRIPE_CUSTOMER_META === $fields['key'] ) {
			$id = isset( $fields['id'] ) ? (int) $fields['id'] : 0;
			continue;
		}
		$meta[] = $entry;
	}
	$meta[]            = array(
		'id'    => $id,
		'key'   => CHECKOUT_CART_BRIDGE_STRIPE_CUSTOMER_META,
		'value' => $stripe_customer,
	);
	$data['meta_data'] = $meta;
	$response->set_data( $data );
	return $response;
}

/**
 * A `_stripe_customer_id` written to the plain key (the service, through the REST API) is copied
 * to the gateway's prefixed key, so the gateway reuses that Customer rather than an older one.
 * The copy's own meta hook has another key, so it does not come back here.
 *
 * @param int    $meta_id   Meta row id.
 * @param int    $user_id   User id.
 * @param string $meta_key  Meta key.
 * @param mixed  $value     Meta value.
 */
function checkout_cart_bridge_mirror_stripe_customer( $meta_id, $user_id, $meta_key, $value ) {
	if ( CHECKOUT_CART_BRIDGE_STRIPE_CUSTOMER_META !== $meta_key || ! is_string( $value ) || '' === $value ) {
		return;
	}
	if ( get_user_option( CHECKOUT_CART_BRIDGE_STRIPE_CUSTOMER_META, $user_id ) === $value ) {
		return;
	}
	update_user_option( (int) $user_id, CHECKOUT_CART_BRIDGE_STRIPE_CUSTOMER_META, $value, false );
}
