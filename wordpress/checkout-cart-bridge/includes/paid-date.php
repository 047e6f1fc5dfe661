<?php
/**
 * Checkout Bridge: an order's paid date written over the REST API as meta `_date_paid` (the REST API
 * takes no `date_paid`) is set with WC_Order::set_date_paid(), as WooCommerce itself would, without
 * the "doing it wrong" notice WC_Data::update_meta_data logs for an internal key.
 *
 * @package CheckoutCartBridge
 */

defined( 'ABSPATH' ) || exit;

add_filter( 'rest_request_before_callbacks', 'checkout_cart_bridge_take_date_paid_meta', 10, 3 );
add_filter( 'woocommerce_rest_pre_insert_shop_order_object', 'checkout_cart_bridge_set_date_paid', 10, 2 );

/**
 * The paid dates taken out of order requests, by request, until the order is prepared.
 *
 * @return SplObjectStorage
 */
function checkout_cart_bridge_taken_dates_paid() {
	static $taken = null;
	if ( null === $taken ) {
		$taken = new SplObjectStorage();
	}
	return $taken;
}

/**
 * Takes `_date_paid` out of an order write's meta_data before the controller hands it to
 * update_meta_data(), which logs the notice. Runs after WordPress validated the request.
 *
 * @param mixed           $response Response so far (null unless another filter answered).
 * @param array           $handler  Route handler.
 * @param WP_REST_Request $request  The request.
 * @return mixed
 */
function checkout_cart_bridge_take_date_paid_meta( $response, $handler, $request ) {
	if ( null !== $response || ! $request instanceof WP_REST_Request || 'GET' === $request->get_method() ) {
		return $response;
	}
	if ( ! preg_match( '#^/wc/v[23]/orders(?:/\d+)?/?$#', (string) $request->get_route() ) ) {
		return $response;
	}
	$meta = $request->get_param( 'meta_data' );
	if ( ! is_array( $meta ) ) {
		return $response;
	}
	$kept  = array();
	$found = false;
	$value = null;
	foreach ( $meta as $entry ) {
		if ( is_array( $entry ) && isset( $entry['key'] ) && '_date_paid' === $entry['key'] ) {
			// As update_meta_data() would: each entry calls the setter, so the last one wins.
			$found = true;
			$value = isset( $entry['value'] ) ? $entry['value'] : null;
			continue;
		}
		$kept[] = $entry;
	}
	if ( $found ) {
		$request->set_param( 'meta_data', $kept );
		checkout_cart_bridge_taken_dates_paid()->attach( $request, $value );
	}
	return $response;
}

/**
 * Sets the paid date taken from the request, where the meta would have set it: before save_object()
 * changes the status, so WC_Order::maybe_set_date_paid() sees it.
 *
 * @param WC_Order|WP_Error $order   The order prepared from the request.
 * @param WP_REST_Request   $request The request.
 * @return WC_Order|WP_Error
 */
function checkout_cart_bridge_set_date_paid( $order, $request ) {
	$taken = checkout_cart_bridge_taken_dates_paid();
	if ( ! $request instanceof WP_REST_Request || ! $taken->contains( $request ) ) {
		return $order;
	}
	$value = $taken->offsetGet( $request );
	$taken->detach( $request );
	if ( $order instanceof WC_Order ) {
		$order->set_date_paid( $value );
	}
	return $order;
}
