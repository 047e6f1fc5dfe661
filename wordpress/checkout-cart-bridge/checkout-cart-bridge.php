<?php
/**
 * Plugin Name:       Checkout Bridge
 * Description:       Companion of the headless checkout payment service: clears a registered customer's cart after a card payment succeeds and restores it after one fails (two REST routes under wc-checkout-bridge/v1, authenticated with WooCommerce REST API keys), and lets the admin refund card orders, capture and release card authorizations through the service.
 * Version:           1.4.0
 * Requires at least: 6.0
 * Requires PHP:      7.4
 * Requires Plugins:  woocommerce
 * License:           GPL-2.0-or-later
 * Text Domain:       checkout-cart-bridge
 *
 * Why a plugin: WooCommerce's REST API cannot read or change another
 * customer's cart (the persistent cart is user meta hidden from /customers,
 * and the live cart sits in the customer's session). The routes live in a
 * `wc-` namespace so WooCommerce's own consumer-key authentication applies to
 * them, and they require `manage_woocommerce`, which a read/write key of a
 * shop manager or administrator has.
 *
 *   DELETE /wp-json/wc-checkout-bridge/v1/customers/<id>/cart
 *          → {"cleared": true}
 *   POST   /wp-json/wc-checkout-bridge/v1/customers/<id>/cart/restore  {"order_id": <n>, "restore_key": "<id>"}
 *          → {"restored": true, "items": <number of cart lines>}
 *            or, for a restore_key already restored for this customer,
 *            {"restored": true, "items": <n of that restore>, "replayed": true}, cart untouched
 *
 * `restore_key` (optional, since 1.1.0): the service sends the id of the
 * failed-payment event. A payment event may be delivered many times, and the
 * order write that follows the restore may fail and be retried; with the key,
 * the cart is restored once per failure, and a cart the customer edited after
 * that restore is never overwritten by a redelivery. The plugin remembers the
 * customer's last CHECKOUT_CART_BRIDGE_RESTORE_KEYS_KEPT keys in user meta.
 * Without a key every call restores, as in 1.0.0.
 *
 * Errors (WordPress's REST error shape {"code", "message", "data": {"status"}}):
 *   401/403 checkout_bridge_forbidden           the key's user cannot manage_woocommerce
 *   404     checkout_bridge_customer_not_found  no customer with that id (no user, or a
 *                                               user who is not a customer)
 *   404     checkout_bridge_order_not_found     no order with that id, or an order that is
 *                                               not this customer's (a cart is never rebuilt
 *                                               from someone else's order)
 *   400     rest_invalid_param / rest_missing_callback_param   bad or missing id / order_id
 * The service treats every 404 as "nothing to do" and logs a warning; the
 * payment itself is recorded either way.
 *
 * Ids are taken only as positive integers (an order_id of -7 or "abc" is a
 * 400, never order 7 or order 0), and only customers (the `customer` role,
 * see checkout_cart_bridge_is_customer) have a cart to clear or restore.
 *
 * The admin's side (refunds, capture, releasing authorizations) lives in
 * includes/: the gateway and the signed calls to the service. So do the
 * shipment-packages route and (since 1.4.0) the shipping-rates route.
 */

defined( 'ABSPATH' ) || exit;

const CHECKOUT_CART_BRIDGE_NAMESPACE = 'wc-checkout-bridge/v1';

/** User meta holding a customer's keyed restores: restore key => number of cart lines restored, oldest first. */
const CHECKOUT_CART_BRIDGE_RESTORE_KEYS_META = '_checkout_cart_bridge_restore_keys';

/** Far more failures than one customer's payment events can bring within the provider's retries (3 days). */
const CHECKOUT_CART_BRIDGE_RESTORE_KEYS_KEPT = 20;

require_once __DIR__ . '/includes/functions.php';
require_once __DIR__ . '/includes/store-callbacks.php';
require_once __DIR__ . '/includes/order-status.php';
require_once __DIR__ . '/includes/shipment-packages.php';
require_once __DIR__ . '/includes/shipping-rates.php';
require_once __DIR__ . '/includes/stripe-customer.php';
require_once __DIR__ . '/includes/paid-date.php';

add_action( 'plugins_loaded', 'checkout_cart_bridge_load_gateway', 11 );

/** The gateway needs WooCommerce's WC_Payment_Gateway, loaded with WooCommerce. */
function checkout_cart_bridge_load_gateway() {
	if ( ! class_exists( 'WC_Payment_Gateway' ) || ! apply_filters( 'checkout_cart_bridge_register_gateway', true ) ) {
		return;
	}
	require_once __DIR__ . '/includes/class-checkout-cart-bridge-gateway.php';
	add_filter( 'woocommerce_payment_gateways', 'checkout_cart_bridge_add_gateway' );
	add_action( 'woocommerce_create_refund', array( 'Checkout_Cart_Bridge_Gateway', 'remember_refund' ) );
}

/**
 * First in the list: WooCommerce keys gateways by id and the later one wins, so a
 * shop's own gateway registered under the same id (the official Stripe plugin's
 * `stripe`) keeps its orders.
 *
 * @param array $gateways Gateway class names or instances.
 * @return array
 */
function checkout_cart_bridge_add_gateway( $gateways ) {
	array_unshift( $gateways, 'Checkout_Cart_Bridge_Gateway' );
	return $gateways;
}

add_action( 'rest_api_init', 'checkout_cart_bridge_register_routes' );

// Orders are read through wc_get_order(), so High-Performance Order Storage is supported.
add_action(
	'before_woocommerce_init',
	static function () {
		if ( class_exists( \Automattic\WooCommerce\Utilities\FeaturesUtil::class ) ) {
			\Automattic\WooCommerce\Utilities\FeaturesUtil::declare_compatibility( 'custom_order_tables', __FILE__, true );
		}
	}
);

function checkout_cart_bridge_register_routes() {
	$customer_id = array(
		'description'       => 'Registered customer (WordPress user) id.',
		'type'              => 'integer',
		'minimum'           => 1,
		'required'          => true,
		'validate_callback' => 'checkout_cart_bridge_validate_id',
		'sanitize_callback' => 'checkout_cart_bridge_sanitize_id',
	);

	register_rest_route(
		CHECKOUT_CART_BRIDGE_NAMESPACE,
		'/customers/(?P<id>\d+)/cart',
		array(
			'methods'             => WP_REST_Server::DELETABLE,
			'callback'            => 'checkout_cart_bridge_clear_cart',
			'permission_callback' => 'checkout_cart_bridge_can_manage',
			'args'                => array( 'id' => $customer_id ),
		)
	);

	register_rest_route(
		CHECKOUT_CART_BRIDGE_NAMESPACE,
		'/customers/(?P<id>\d+)/cart/restore',
		array(
			'methods'             => WP_REST_Server::CREATABLE,
			'callback'            => 'checkout_cart_bridge_restore_cart',
			'permission_callback' => 'checkout_cart_bridge_can_manage',
			'args'                => array(
				'id'       => $customer_id,
				'order_id'    => array(
					'description'       => 'The order whose line items become the cart.',
					'type'              => 'integer',
					'minimum'           => 1,
					'required'          => true,
					'validate_callback' => 'checkout_cart_bridge_validate_id',
					'sanitize_callback' => 'checkout_cart_bridge_sanitize_id',
				),
				'restore_key' => array(
					'description' => 'Idempotency key (the failed-payment event id): the cart is restored once per key and customer.',
					'type'        => 'string',
					'pattern'     => '^[A-Za-z0-9_.:-]{1,255}$',
					'required'    => false,
				),
			),
		)
	);
}

/**
 * WordPress validates before it sanitizes: an id that is not a positive integer is
 * answered 400 rest_invalid_param here, before anything could coerce it.
 *
 * @param mixed           $value   The argument.
 * @param WP_REST_Request $request The request.
 * @param string          $param   Its name.
 * @return true|WP_Error
 */
function checkout_cart_bridge_validate_id( $value, $request, $param ) {
	if ( checkout_cart_bridge_is_positive_id( $value ) ) {
		return true;
	}
	/* translators: %s: parameter name. */
	return new WP_Error( 'rest_invalid_param', sprintf( __( '%s must be a positive integer.', 'checkout-cart-bridge' ), $param ), array( 'status' => 400 ) );
}

/**
 * A validated id as an integer.
 *
 * @param mixed $value The argument, already validated.
 * @return int
 */
function checkout_cart_bridge_sanitize_id( $value ) {
	return (int) $value;
}

/**
 * Whether a user is a customer whose cart the service may clear or restore: the
 * `customer` role (filter checkout_cart_bridge_customer_roles), or a capability a
 * shop names with checkout_cart_bridge_customer_capability; decided last by
 * checkout_cart_bridge_is_customer. Never a shop manager's or an administrator's
 * cart by default.
 *
 * @param WP_User $user The user.
 * @return bool
 */
function checkout_cart_bridge_is_customer( WP_User $user ) {
	$roles       = (array) apply_filters( 'checkout_cart_bridge_customer_roles', array( 'customer' ) );
	$is_customer = count( array_intersect( $roles, (array) $user->roles ) ) > 0;
	$capability  = (string) apply_filters( 'checkout_cart_bridge_customer_capability', '' );
	if ( ! $is_customer && '' !== $capability ) {
		$is_customer = user_can( $user, $capability );
	}
	return (bool) apply_filters( 'checkout_cart_bridge_is_customer', $is_customer, $user );
}

/** Only shop managers and administrators (and REST API keys owned by them). */
function checkout_cart_bridge_can_manage() {
	if ( current_user_can( 'manage_woocommerce' ) ) {
		return true;
	}
	return new WP_Error(
		'checkout_bridge_forbidden',
		'Sorry, you are not allowed to manage customer carts.',
		array( 'status' => rest_authorization_required_code() )
	);
}

/** The user meta key WooCommerce keeps a customer's persistent cart under. */
function checkout_cart_bridge_persistent_cart_key() {
	return '_woocommerce_persistent_cart_' . get_current_blog_id();
}

/**
 * @return WP_User|WP_Error
 */
function checkout_cart_bridge_customer( $customer_id ) {
	$user = get_userdata( (int) $customer_id );
	if ( ! $user || ! checkout_cart_bridge_is_customer( $user ) ) {
		return new WP_Error( 'checkout_bridge_customer_not_found', 'Customer not found.', array( 'status' => 404 ) );
	}
	return $user;
}

/**
 * Deletes the customer's WooCommerce session (the live cart), so their next
 * visit starts from the persistent cart.
 */
function checkout_cart_bridge_forget_session( $customer_id ) {
	if ( class_exists( 'WC_Session_Handler' ) && method_exists( 'WC_Session_Handler', 'delete_session' ) ) {
		$sessions = new WC_Session_Handler();
		$sessions->delete_session( (string) $customer_id );
		return;
	}
	global $wpdb;
	$wpdb->delete( $wpdb->prefix . 'woocommerce_sessions', array( 'session_key' => (string) $customer_id ), array( '%s' ) );
}

/** DELETE …/customers/<id>/cart: empties the persistent cart and the session. */
function checkout_cart_bridge_clear_cart( WP_REST_Request $request ) {
	$customer_id = (int) $request['id'];
	$user        = checkout_cart_bridge_customer( $customer_id );
	if ( is_wp_error( $user ) ) {
		return $user;
	}

	delete_user_meta( $customer_id, checkout_cart_bridge_persistent_cart_key() );
	checkout_cart_bridge_forget_session( $customer_id );

	return rest_ensure_response( array( 'cleared' => true ) );
}

/**
 * The customer's keyed restores, restore key => number of cart lines, oldest first.
 *
 * @return array<string, int>
 */
function checkout_cart_bridge_restore_keys( $customer_id ) {
	$keys = get_user_meta( $customer_id, CHECKOUT_CART_BRIDGE_RESTORE_KEYS_META, true );
	return is_array( $keys ) ? $keys : array();
}

/** Remembers a keyed restore, keeping the newest CHECKOUT_CART_BRIDGE_RESTORE_KEYS_KEPT. */
function checkout_cart_bridge_remember_restore( $customer_id, $restore_key, $items ) {
	$keys = checkout_cart_bridge_restore_keys( $customer_id );
	unset( $keys[ $restore_key ] );
	$keys[ $restore_key ] = (int) $items;
	if ( count( $keys ) > CHECKOUT_CART_BRIDGE_RESTORE_KEYS_KEPT ) {
		$keys = array_slice( $keys, -CHECKOUT_CART_BRIDGE_RESTORE_KEYS_KEPT, null, true );
	}
	update_user_meta( $customer_id, CHECKOUT_CART_BRIDGE_RESTORE_KEYS_META, $keys );
}

/**
 * POST …/customers/<id>/cart/restore: the persistent cart becomes the order's
 * line items (replacing, not adding to, what was there), and the session is
 * dropped so the customer sees it. Items whose product no longer exists, is
 * out of stock, or is a variable product without a chosen variation are
 * skipped, as WooCommerce's own "order again" does.
 *
 * With a `restore_key` already restored for this customer, nothing changes:
 * the answer repeats that restore's item count with `replayed: true`. The key
 * is remembered after the cart is written, so a request that dies between the
 * two restores again on its retry (before the customer could have edited the
 * cart), and one that is answered `replayed` has really restored.
 */
function checkout_cart_bridge_restore_cart( WP_REST_Request $request ) {
	$customer_id = (int) $request['id'];
	$order_id    = (int) $request['order_id'];
	$restore_key = isset( $request['restore_key'] ) ? (string) $request['restore_key'] : '';

	$user = checkout_cart_bridge_customer( $customer_id );
	if ( is_wp_error( $user ) ) {
		return $user;
	}
	// Ownership: only this customer's own order may become their cart. A refund
	// (WC_Order_Refund) has no customer and is not an order to restore from.
	$order = wc_get_order( $order_id );
	if ( ! ( $order instanceof WC_Order ) || (int) $order->get_customer_id() !== $customer_id ) {
		return new WP_Error( 'checkout_bridge_order_not_found', 'Order not found for this customer.', array( 'status' => 404 ) );
	}

	if ( '' !== $restore_key ) {
		$restored = checkout_cart_bridge_restore_keys( $customer_id );
		if ( isset( $restored[ $restore_key ] ) ) {
			return rest_ensure_response(
				array(
					'restored' => true,
					'items'    => (int) $restored[ $restore_key ],
					'replayed' => true,
				)
			);
		}
	}

	$cart = array();
	foreach ( $order->get_items( 'line_item' ) as $item ) {
		/** @var WC_Order_Item_Product $item */
		$product_id   = (int) $item->get_product_id();
		$variation_id = (int) $item->get_variation_id();
		$quantity     = (int) $item->get_quantity();
		$product      = $item->get_product();
		if ( ! $product || $quantity < 1 || ! $product->is_in_stock() ) {
			continue;
		}
		if ( ! $variation_id && $product->is_type( 'variable' ) ) {
			continue;
		}

		$variation = array();
		foreach ( $item->get_meta_data() as $meta ) {
			if ( taxonomy_is_product_attribute( $meta->key ) || meta_is_product_attribute( $meta->key, $meta->value, $product_id ) ) {
				$variation[ 'attribute_' . $meta->key ] = $meta->value;
			}
		}

		$key = checkout_cart_bridge_cart_id( $product_id, $variation_id, $variation );
		if ( isset( $cart[ $key ] ) ) {
			$cart[ $key ]['quantity'] += $quantity;
			continue;
		}
		$cart[ $key ] = array(
			'key'          => $key,
			'product_id'   => $product_id,
			'variation_id' => $variation_id,
			'variation'    => $variation,
			'quantity'     => $quantity,
			'data_hash'    => function_exists( 'wc_get_cart_item_data_hash' ) ? wc_get_cart_item_data_hash( $product ) : '',
		);
	}

	update_user_meta( $customer_id, checkout_cart_bridge_persistent_cart_key(), array( 'cart' => $cart ) );
	checkout_cart_bridge_forget_session( $customer_id );
	if ( '' !== $restore_key ) {
		checkout_cart_bridge_remember_restore( $customer_id, $restore_key, count( $cart ) );
	}

	return rest_ensure_response(
		array(
			'restored' => true,
			'items'    => count( $cart ),
		)
	);
}

/**
 * The cart item key WooCommerce itself would give this line
 * (WC_Cart::generate_cart_id, which needs a loaded cart this request does not
 * have), so the customer's next "add to cart" of the same item merges with it.
 */
function checkout_cart_bridge_cart_id( $product_id, $variation_id, array $variation ) {
	$id_parts = array( $product_id );
	if ( $variation_id ) {
		$id_parts[] = $variation_id;
	}
	if ( ! empty( $variation ) ) {
		$variation_key = '';
		foreach ( $variation as $name => $value ) {
			$variation_key .= trim( (string) $name ) . trim( (string) $value );
		}
		$id_parts[] = $variation_key;
	}
	return apply_filters( 'woocommerce_cart_id', md5( implode( '_', $id_parts ) ), $product_id, $variation_id, $variation, array() );
}
