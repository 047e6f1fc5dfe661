<?php
/**
 * Checkout Bridge: a shipped order's packages, merged under a database lock.
 *
 *   POST /wp-json/wc-checkout-bridge/v1/orders/<id>/shipment-packages
 *        {"package": {"key", "tracking_number", "carrier", "ship_date", "voided"?},
 *         "note_line"?: "<customer note line>", "tracking_item"?: {...}, "remove_tracking_id"?: "<id>",
 *         "ship"?: {"from": "<status read>", "status": "shipped", "customer_note": "...", "meta": {...}}}
 *        → {"added": true|false, "shipped": true|false, "status": "<status after>", "packages": [<the list after>]}
 *
 * The service's shipping webhook adds a later package (or marks one voided) here instead of
 * writing the whole list it read: two deliveries of one order on two instances (no shared lock,
 * Redis down) each merge their package, and the same package twice is added once. The list, the
 * customer note line and the Shipment Tracking item change together, under MySQL's GET_LOCK.
 * With `ship` (the service sends it when its order lock could not be shared), the first package
 * ships the order only if it is still in the status the service read (its status, note and meta
 * set as the service's own write would); an order shipped meanwhile gets the package as a later
 * one; any other status changes nothing. A `ship.status` the store does not know is a 400
 * rest_invalid_param, as WooCommerce's own route answers it.
 *
 * Errors: 404 checkout_bridge_order_not_found; 409 checkout_bridge_order_busy (the lock was not
 * free within 10 s); 409 checkout_bridge_packages_unreadable (`_shipment_packages` is not a JSON
 * list of packages: edited by hand or by another plugin; nothing is changed, the shop repairs it).
 *
 * @package CheckoutCartBridge
 */

defined( 'ABSPATH' ) || exit;

const CHECKOUT_CART_BRIDGE_PACKAGES_META = '_shipment_packages';
const CHECKOUT_CART_BRIDGE_TRACKING_ITEMS_META = '_wc_shipment_tracking_items';

add_action( 'rest_api_init', 'checkout_cart_bridge_register_packages_route' );

function checkout_cart_bridge_register_packages_route() {
	register_rest_route(
		CHECKOUT_CART_BRIDGE_NAMESPACE,
		'/orders/(?P<id>\d+)/shipment-packages',
		array(
			'methods'             => WP_REST_Server::CREATABLE,
			'callback'            => 'checkout_cart_bridge_merge_package',
			'permission_callback' => 'checkout_cart_bridge_can_manage',
			'args'                => array(
				'id'                 => array(
					'type'              => 'integer',
					'minimum'           => 1,
					'required'          => true,
					'validate_callback' => 'checkout_cart_bridge_validate_id',
					'sanitize_callback' => 'checkout_cart_bridge_sanitize_id',
				),
				'package'            => array(
					'type'       => 'object',
					'required'   => true,
					'properties' => array(
						'key'             => array(
							'type'      => 'string',
							'minLength' => 1,
							'maxLength' => 255,
							'required'  => true,
						),
						'tracking_number' => array( 'type' => 'string' ),
						'carrier'         => array( 'type' => 'string' ),
						'ship_date'       => array( 'type' => 'string' ),
						'voided'          => array( 'type' => 'boolean' ),
					),
				),
				'note_line'          => array( 'type' => 'string' ),
				'tracking_item'      => array( 'type' => 'object' ),
				'remove_tracking_id' => array( 'type' => 'string' ),
				'ship'               => array(
					'type'       => 'object',
					'properties' => array(
						'from'          => array(
							'type'     => 'string',
							'required' => true,
						),
						'status'        => array(
							'type'     => 'string',
							'required' => true,
						),
						'customer_note' => array( 'type' => 'string' ),
						'meta'          => array( 'type' => 'object' ),
					),
				),
			),
		)
	);
}

/**
 * The order's package list, or null when the stored value is not one (never read as "none").
 *
 * @param string $raw The meta value.
 * @return array|null
 */
function checkout_cart_bridge_read_packages( $raw ) {
	if ( '' === $raw ) {
		return array();
	}
	$list = is_string( $raw ) ? json_decode( $raw, true ) : null;
	if ( ! is_array( $list ) || array_values( $list ) !== $list ) {
		return null;
	}
	foreach ( $list as $entry ) {
		if ( ! is_array( $entry ) || ! isset( $entry['key'] ) || ! is_string( $entry['key'] ) ) {
			return null;
		}
	}
	return $list;
}

function checkout_cart_bridge_merge_package( WP_REST_Request $request ) {
	global $wpdb;
	$order_id = (int) $request['id'];
	$lock     = 'checkout_cart_bridge_order_' . get_current_blog_id() . '_' . $order_id;
	if ( '1' !== (string) $wpdb->get_var( $wpdb->prepare( 'SELECT GET_LOCK(%s, 10)', $lock ) ) ) {
		return new WP_Error( 'checkout_bridge_order_busy', 'The order is being changed by another request.', array( 'status' => 409 ) );
	}
	try {
		return checkout_cart_bridge_merge_package_locked( $order_id, $request );
	} finally {
		$wpdb->query( $wpdb->prepare( 'SELECT RELEASE_LOCK(%s)', $lock ) );
	}
}

function checkout_cart_bridge_merge_package_locked( $order_id, WP_REST_Request $request ) {
	$order = wc_get_order( $order_id );
	if ( ! ( $order instanceof WC_Order ) ) {
		return new WP_Error( 'checkout_bridge_order_not_found', 'Order not found.', array( 'status' => 404 ) );
	}
	$packages = checkout_cart_bridge_read_packages( (string) $order->get_meta( CHECKOUT_CART_BRIDGE_PACKAGES_META, true ) );

	$ship = $request['ship'];
	if ( is_array( $ship ) ) {
		if ( ! wc_is_order_status( 'wc-' . $ship['status'] ) ) {
			return new WP_Error( 'rest_invalid_param', 'Invalid parameter(s): ship', array( 'status' => 400, 'params' => array( 'ship' => 'ship[status] is not a registered order status.' ) ) );
		}
		if ( $order->get_status() === $ship['from'] ) {
			foreach ( (array) ( $ship['meta'] ?? array() ) as $key => $value ) {
				$order->update_meta_data( (string) $key, $value );
			}
			$item = $request['tracking_item'];
			if ( is_array( $item ) && isset( $item['tracking_id'] ) ) {
				$items = array_values( array_filter( (array) $order->get_meta( CHECKOUT_CART_BRIDGE_TRACKING_ITEMS_META, true ), 'is_array' ) );
				if ( ! in_array( $item['tracking_id'], array_column( $items, 'tracking_id' ), true ) ) {
					$items[] = $item;
					$order->update_meta_data( CHECKOUT_CART_BRIDGE_TRACKING_ITEMS_META, $items );
				}
			}
			$order->set_customer_note( (string) ( $ship['customer_note'] ?? '' ) );
			$order->set_status( $ship['status'] );
			$order->save();
			return rest_ensure_response( array( 'added' => true, 'shipped' => true, 'status' => $order->get_status(), 'packages' => $packages ?? array() ) );
		}
		if ( ! in_array( $order->get_status(), array( 'shipped', 'completed' ), true ) ) {
			return checkout_cart_bridge_packages_answer( $order, false, $packages ?? array() );
		}
	}
	// Never read as "none": its packages would be added again.
	if ( null === $packages ) {
		return new WP_Error( 'checkout_bridge_packages_unreadable', 'The order\'s shipment packages are not readable; nothing was changed.', array( 'status' => 409 ) );
	}

	$given   = (array) $request['package'];
	$package = array(
		'key'             => (string) $given['key'],
		'tracking_number' => isset( $given['tracking_number'] ) ? (string) $given['tracking_number'] : '',
		'carrier'         => isset( $given['carrier'] ) ? (string) $given['carrier'] : '',
		'ship_date'       => isset( $given['ship_date'] ) ? (string) $given['ship_date'] : '',
	);
	$voided  = ! empty( $given['voided'] );
	$index   = null;
	foreach ( $packages as $i => $entry ) {
		if ( $entry['key'] === $package['key'] ) {
			$index = $i;
		}
	}

	if ( $voided ) {
		if ( null !== $index && ! empty( $packages[ $index ]['voided'] ) ) {
			return checkout_cart_bridge_packages_answer( $order, false, $packages );
		}
		if ( null === $index ) {
			$packages[] = $package + array( 'voided' => true );
		} else {
			$packages[ $index ]['voided'] = true;
		}
		$remove = (string) $request['remove_tracking_id'];
		if ( '' !== $remove ) {
			$items = (array) $order->get_meta( CHECKOUT_CART_BRIDGE_TRACKING_ITEMS_META, true );
			$kept  = array_values( array_filter( $items, static fn( $item ) => ! ( is_array( $item ) && isset( $item['tracking_id'] ) && $item['tracking_id'] === $remove ) ) );
			$order->update_meta_data( CHECKOUT_CART_BRIDGE_TRACKING_ITEMS_META, $kept );
		}
	} else {
		// Held already: by its key, or by its tracking number (the first package is known by the spec's _tracking_number only).
		$tracking = $package['tracking_number'];
		$held     = null !== $index;
		foreach ( $packages as $entry ) {
			$held = $held || ( '' !== $tracking && isset( $entry['tracking_number'] ) && $entry['tracking_number'] === $tracking && empty( $entry['voided'] ) );
		}
		foreach ( $order->get_meta( '_tracking_number', false ) as $meta ) {
			$held = $held || ( '' !== $tracking && (string) $meta->value === $tracking );
		}
		if ( $held ) {
			return checkout_cart_bridge_packages_answer( $order, false, $packages );
		}
		$packages[] = $package;
		$line       = (string) $request['note_line'];
		if ( '' !== $line ) {
			$note = (string) $order->get_customer_note();
			$order->set_customer_note( '' === $note ? $line : $note . "\n" . $line );
		}
		$item = $request['tracking_item'];
		if ( is_array( $item ) && isset( $item['tracking_id'] ) ) {
			$items = array_values( array_filter( (array) $order->get_meta( CHECKOUT_CART_BRIDGE_TRACKING_ITEMS_META, true ), 'is_array' ) );
			if ( ! in_array( $item['tracking_id'], array_column( $items, 'tracking_id' ), true ) ) {
				$items[] = $item;
				$order->update_meta_data( CHECKOUT_CART_BRIDGE_TRACKING_ITEMS_META, $items );
			}
		}
	}

	$order->update_meta_data( CHECKOUT_CART_BRIDGE_PACKAGES_META, wp_json_encode( $packages, JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE ) );
	$order->save();
	return checkout_cart_bridge_packages_answer( $order, true, $packages );
}

function checkout_cart_bridge_packages_answer( WC_Order $order, $added, array $packages ) {
	return rest_ensure_response(
		array(
			'added'    => $added,
			'shipped'  => false,
			'status'   => $order->get_status(),
			'packages' => $packages,
		)
	);
}
