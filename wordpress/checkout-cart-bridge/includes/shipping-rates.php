<?php
/**
 * Checkout Cart Bridge: an order's shipping rates at a destination, for a wallet's express checkout.
 *
 *   GET /wp-json/wc-checkout-bridge/v1/orders/<id>/shipping-rates?country=CA&state=ON&postcode=M5V&city=Toronto
 *       → {"rates": [{"id": "flat_rate:3", "method_id": "flat_rate", "instance_id": 3, "label": "Flat rate",
 *                     "total": "10.00", "total_tax": "1.30"}], "cart_tax": "2.60",
 *        "destination": {"country": "CA", "state": "ON", "postcode": "M5V", "city": "Toronto"}}
 *
 * The rates are WooCommerce's own (zones, methods, shipping classes, free-shipping thresholds), computed
 * with a throw-away cart holding the order's items at the order's prices, and nothing is saved: not the
 * order, not a session, not anyone's cart. `cart_tax` is the tax of the order's items and fees at that
 * destination, as the order would compute it once the address is written; `destination` is the address
 * as WooCommerce matched it (a state given by name becomes its code), the one to write. An empty list: no method serves
 * the destination (or nothing in the order needs shipping).
 *
 * Errors: 404 checkout_bridge_order_not_found; 400 rest_invalid_param / rest_missing_callback_param.
 *
 * @package CheckoutCartBridge
 */

defined( 'ABSPATH' ) || exit;

add_action( 'rest_api_init', 'checkout_cart_bridge_register_shipping_rates_route' );

function checkout_cart_bridge_register_shipping_rates_route() {
	$text = static function ( $max, $required = false ) {
		return array(
			'type'      => 'string',
			'maxLength' => $max,
			'required'  => $required,
		);
	};
	register_rest_route(
		CHECKOUT_CART_BRIDGE_NAMESPACE,
		'/orders/(?P<id>\d+)/shipping-rates',
		array(
			'methods'             => WP_REST_Server::READABLE,
			'callback'            => 'checkout_cart_bridge_shipping_rates',
			'permission_callback' => 'checkout_cart_bridge_can_manage',
			'args'                => array(
				'id'       => array(
					'type'              => 'integer',
					'minimum'           => 1,
					'required'          => true,
					'validate_callback' => 'checkout_cart_bridge_validate_id',
					'sanitize_callback' => 'checkout_cart_bridge_sanitize_id',
				),
				'country'  => array(
					'type'     => 'string',
					'pattern'  => '^[A-Za-z]{2}$',
					'required' => true,
				),
				'state'    => $text( 100 ),
				'postcode' => $text( 20 ),
				'city'     => $text( 100 ),
			),
		)
	);
}

/**
 * A wallet may report a state by name ("Ontario"): WooCommerce's zones match its code ("ON").
 *
 * @param string $country Country code.
 * @param string $state   State code or name.
 * @return string
 */
function checkout_cart_bridge_state_code( $country, $state ) {
	$states = WC()->countries->get_states( $country );
	if ( '' === $state || ! is_array( $states ) ) {
		return $state;
	}
	if ( isset( $states[ strtoupper( $state ) ] ) ) {
		return strtoupper( $state );
	}
	foreach ( $states as $code => $name ) {
		if ( 0 === strcasecmp( html_entity_decode( $name, ENT_QUOTES ), $state ) ) {
			return (string) $code;
		}
	}
	return $state;
}

function checkout_cart_bridge_shipping_rates( WP_REST_Request $request ) {
	$order = wc_get_order( (int) $request['id'] );
	if ( ! ( $order instanceof WC_Order ) || $order instanceof WC_Order_Refund ) {
		return new WP_Error( 'checkout_bridge_order_not_found', 'Order not found.', array( 'status' => 404 ) );
	}
	$country     = strtoupper( (string) $request['country'] );
	$destination = array(
		'country'  => $country,
		'state'    => checkout_cart_bridge_state_code( $country, trim( (string) $request['state'] ) ),
		'postcode' => wc_format_postcode( trim( (string) $request['postcode'] ), $country ),
		'city'     => trim( (string) $request['city'] ),
	);

	include_once WC_ABSPATH . 'includes/wc-cart-functions.php';
	include_once WC_ABSPATH . 'includes/wc-notice-functions.php';
	$wc    = WC();
	$saved = array( $wc->session, $wc->customer, $wc->cart );
	try {
		$rates = checkout_cart_bridge_rates_with_scratch_cart( $order, $destination );
	} finally {
		list( $wc->session, $wc->customer, $wc->cart ) = $saved;
	}

	return rest_ensure_response(
		array(
			'rates'       => $rates,
			'cart_tax'    => checkout_cart_bridge_cart_tax_at( $order, $destination ),
			'destination' => $destination,
		)
	);
}

/**
 * WooCommerce computes rates for a cart: the order's items go into one that lives in memory only
 * (no session is stored, no persistent cart written, no cookie set).
 *
 * @return array[]
 */
function checkout_cart_bridge_rates_with_scratch_cart( WC_Order $order, array $destination ) {
	$wc          = WC();
	$wc->session = new class() extends WC_Session {};

	$customer = new WC_Customer();
	$customer->set_billing_location( $order->get_billing_country(), $order->get_billing_state(), $order->get_billing_postcode(), $order->get_billing_city() );
	$customer->set_shipping_location( $destination['country'], $destination['state'], $destination['postcode'], $destination['city'] );
	$customer->set_calculated_shipping( true );
	$wc->customer = $customer;

	add_filter( 'woocommerce_cart_session_initialize', '__return_false' );
	$wc->cart = new WC_Cart();
	remove_filter( 'woocommerce_cart_session_initialize', '__return_false' );

	$contents = array();
	foreach ( $order->get_items( 'line_item' ) as $item ) {
		/** @var WC_Order_Item_Product $item */
		$product  = $item->get_product();
		$quantity = (int) $item->get_quantity();
		if ( ! $product || $quantity < 1 ) {
			continue;
		}
		// The order's own price, not today's catalogue price: the free-shipping threshold is about this order.
		$product = clone $product;
		$unit    = (float) $item->get_subtotal() + ( wc_prices_include_tax() ? (float) $item->get_subtotal_tax() : 0.0 );
		$product->set_price( $unit / $quantity );
		$key              = 'order_item_' . $item->get_id();
		$contents[ $key ] = array(
			'key'          => $key,
			'product_id'   => (int) $item->get_product_id(),
			'variation_id' => (int) $item->get_variation_id(),
			'variation'    => array(),
			'quantity'     => $quantity,
			'data'         => $product,
			'data_hash'    => '',
		);
	}
	$wc->cart->set_cart_contents( $contents );
	$wc->cart->set_applied_coupons( $order->get_coupon_codes() );
	$wc->cart->calculate_totals();
	if ( ! $wc->cart->needs_shipping() ) {
		return array();
	}

	$rates = array();
	$wc->shipping()->reset_shipping();
	foreach ( $wc->cart->get_shipping_packages() as $key => $package ) {
		$package['user']['ID'] = $order->get_customer_id();
		$calculated            = $wc->shipping()->calculate_shipping_for_package( $package, $key );
		foreach ( (array) ( $calculated['rates'] ?? array() ) as $rate ) {
			/** @var WC_Shipping_Rate $rate */
			$rates[] = array(
				'id'          => (string) $rate->get_id(),
				'method_id'   => (string) $rate->get_method_id(),
				'instance_id' => (int) $rate->get_instance_id(),
				'label'       => (string) $rate->get_label(),
				'total'       => wc_format_decimal( $rate->get_cost(), wc_get_price_decimals() ),
				'total_tax'   => wc_format_decimal( wc_round_tax_total( (float) $rate->get_shipping_tax() ), wc_get_price_decimals() ),
			);
		}
		break; // One package: the order has one shipping address.
	}
	$wc->shipping()->reset_shipping();
	return $rates;
}

/**
 * The tax of the order's items and fees once shipped to the destination, as WC_Abstract_Order::update_taxes
 * sums it, on copies of the items (nothing is saved).
 */
function checkout_cart_bridge_cart_tax_at( WC_Order $order, array $destination ) {
	$preview = clone $order;
	$preview->set_shipping_country( $destination['country'] );
	$preview->set_shipping_state( $destination['state'] );
	$preview->set_shipping_postcode( $destination['postcode'] );
	$preview->set_shipping_city( $destination['city'] );
	$location = new ReflectionMethod( $preview, 'get_tax_location' );
	$location->setAccessible( true );
	$round = new ReflectionMethod( $preview, 'round_line_tax' );
	$round->setAccessible( true );
	$for = $location->invoke( $preview );

	$taxes = array();
	foreach ( $order->get_items( array( 'line_item', 'fee' ) ) as $item ) {
		$copy = clone $item;
		$copy->calculate_taxes( $for );
		$item_taxes = $copy->get_taxes();
		foreach ( (array) ( $item_taxes['total'] ?? array() ) as $rate_id => $tax ) {
			$taxes[ $rate_id ] = ( $taxes[ $rate_id ] ?? 0.0 ) + (float) $round->invoke( null, $tax, false );
		}
	}
	return wc_format_decimal( wc_round_tax_total( array_sum( $taxes ) ), wc_get_price_decimals() );
}
