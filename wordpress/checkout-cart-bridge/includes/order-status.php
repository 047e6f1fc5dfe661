<?php
/**
 * Checkout Bridge: the `authorized` order status (wc-authorized). With the
 * capture setting "on_shipment" the service puts an order whose only hold is its
 * card authorization in it, so ShipStation can import it as Awaiting Shipment while
 * orders on hold for other reasons stay `on-hold` (the service's docs/integrations/shipstation.md).
 * Not a paid status: the money is captured when the order ships.
 *
 * @package CheckoutCartBridge
 */

defined( 'ABSPATH' ) || exit;

const CHECKOUT_CART_BRIDGE_AUTHORIZED_STATUS = 'wc-authorized';

// Registered whatever the capture setting, so orders already in it stay valid when the setting changes.
add_filter( 'woocommerce_register_shop_order_post_statuses', 'checkout_cart_bridge_register_authorized_status' );
add_filter( 'wc_order_statuses', 'checkout_cart_bridge_add_authorized_status' );
add_filter( 'option_woocommerce_shipstation_settings', 'checkout_cart_bridge_shipstation_settings' );
add_filter( 'default_option_woocommerce_shipstation_settings', 'checkout_cart_bridge_shipstation_settings' );

/**
 * The post status (WC_Post_Types::register_post_status registers every status of this filter;
 * High-Performance Order Storage reads the same list through wc_get_order_statuses).
 *
 * @param array $statuses Post statuses by name.
 * @return array
 */
function checkout_cart_bridge_register_authorized_status( $statuses ) {
	$statuses[ CHECKOUT_CART_BRIDGE_AUTHORIZED_STATUS ] = array(
		'label'                     => _x( 'Authorized (awaiting shipment)', 'Order status', 'checkout-cart-bridge' ),
		'public'                    => false,
		'exclude_from_search'       => false,
		'show_in_admin_all_list'    => true,
		'show_in_admin_status_list' => true,
		/* translators: %s: number of orders */
		'label_count'               => _n_noop( 'Authorized <span class="count">(%s)</span>', 'Authorized <span class="count">(%s)</span>', 'checkout-cart-bridge' ),
	);
	return $statuses;
}

/**
 * The order status, right after On hold (the REST API's status enum follows this list).
 *
 * @param array $statuses Order statuses, `wc-` prefixed, with their labels.
 * @return array
 */
function checkout_cart_bridge_add_authorized_status( $statuses ) {
	$label = _x( 'Authorized (awaiting shipment)', 'Order status', 'checkout-cart-bridge' );
	$out   = array();
	foreach ( $statuses as $status => $name ) {
		$out[ $status ] = $name;
		if ( 'wc-on-hold' === $status ) {
			$out[ CHECKOUT_CART_BRIDGE_AUTHORIZED_STATUS ] = $label;
		}
	}
	if ( ! isset( $out[ CHECKOUT_CART_BRIDGE_AUTHORIZED_STATUS ] ) ) {
		$out[ CHECKOUT_CART_BRIDGE_AUTHORIZED_STATUS ] = $label;
	}
	return $out;
}

/**
 * With capture on shipment, the ShipStation plugin (woocommerce-shipstation-integration) reads its
 * settings with `authorized` among the exported statuses and mapped to ShipStation's Awaiting Shipment
 * (its REST mode; an unmapped status is imported On Hold). Its defaults are kept for everything else;
 * nothing is written to its option.
 *
 * @param mixed $settings The `woocommerce_shipstation_settings` option (false when not saved yet).
 * @return mixed
 */
function checkout_cart_bridge_shipstation_settings( $settings ) {
	if ( 'on_shipment' !== checkout_cart_bridge_capture_mode() ) {
		return $settings;
	}
	$settings = is_array( $settings ) ? $settings : array();
	// The ShipStation plugin's own defaults when the field is unset (WC_ShipStation_Integration).
	$defaults = array(
		'export_statuses'         => array( 'wc-processing', 'wc-on-hold', 'wc-completed', 'wc-cancelled' ),
		'AwaitingShipment_status' => array( 'wc-processing' ),
	);
	foreach ( $defaults as $key => $default ) {
		$value            = isset( $settings[ $key ] ) && is_array( $settings[ $key ] ) ? $settings[ $key ] : $default;
		$settings[ $key ] = in_array( CHECKOUT_CART_BRIDGE_AUTHORIZED_STATUS, $value, true ) ? $value : array_merge( $value, array( CHECKOUT_CART_BRIDGE_AUTHORIZED_STATUS ) );
	}
	return $settings;
}
