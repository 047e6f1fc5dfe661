<?php
/**
 * Checkout Bridge: the checkout service's card payments as a WooCommerce
 * payment gateway, so the order screen offers "Refund via Credit Card" on
 * the orders the service marked paid by card.
 *
 * WooCommerce matches an order to a gateway by the order's payment method
 * (wc_get_payment_gateway_by_order, wc_refund_payment), among all registered
 * gateways, enabled or not. So the gateway is registered under the payment
 * method id the service writes (its CARD_PAYMENT_METHOD_ID, `cardprovider`
 * by default), declares `refunds`, and is never available at WooCommerce's
 * own checkout: the storefront is headless and pays through the service.
 *
 * A refund: wc_create_refund saves the WooCommerce refund, fires
 * `woocommerce_create_refund` with it, then calls process_refund with the
 * order id, amount and reason only, and deletes the refund when
 * process_refund answers a WP_Error (showing its message). The refund object
 * is taken from that action (it is saved, so it has its id, by the time
 * process_refund runs) and named in the call, so the service refunds each
 * WooCommerce refund once; the Stripe refund id is kept on it as
 * `_provider_refund_id`, which is how the service's own refund recording
 * knows it is there.
 *
 * @package CheckoutCartBridge
 */

defined( 'ABSPATH' ) || exit;

/**
 * The service's card payments, for refunds from the order screen.
 */
class Checkout_Cart_Bridge_Gateway extends WC_Payment_Gateway {

	/**
	 * The refund WooCommerce is creating in this request, from `woocommerce_create_refund`.
	 *
	 * @var WC_Order_Refund|null
	 */
	private static $refund_in_progress = null;

	/** Registered under the service's payment method id, with its settings under one fixed option. */
	public function __construct() {
		$this->id                 = checkout_cart_bridge_payment_method_id();
		$this->has_fields         = false;
		$this->supports           = array( 'products', 'refunds' );
		$this->method_description = __( 'Card payments taken by the headless checkout service (Stripe). Not offered at WooCommerce\'s checkout: it lets this admin refund card orders through the service, and with manual capture, capture or release their authorizations.', 'checkout-cart-bridge' );
		$this->init_form_fields();
		$this->init_settings();
		$this->title        = $this->get_option( 'title', __( 'Credit Card', 'checkout-cart-bridge' ) );
		$this->method_title = $this->title;
		add_action( 'woocommerce_update_options_payment_gateways_' . $this->id, array( $this, 'process_admin_options' ) );
	}

	/**
	 * One option whatever the id, so the id itself can be a setting.
	 *
	 * @return string
	 */
	public function get_option_key() {
		return CHECKOUT_CART_BRIDGE_SETTINGS_OPTION;
	}

	/** The settings, under WooCommerce → Settings → Payments. */
	public function init_form_fields() {
		$this->form_fields = array(
			'title'             => array(
				'title'       => __( 'Title', 'checkout-cart-bridge' ),
				'type'        => 'text',
				'description' => __( 'Shown on the refund button: "Refund via <title>".', 'checkout-cart-bridge' ),
				'default'     => __( 'Credit Card', 'checkout-cart-bridge' ),
			),
			'payment_method_id' => array(
				'title'       => __( 'Payment method id', 'checkout-cart-bridge' ),
				'type'        => 'text',
				'description' => __( 'The payment method the checkout service writes on card orders: its CARD_PAYMENT_METHOD_ID.', 'checkout-cart-bridge' ),
				'default'     => 'cardprovider',
			),
			'service_url'       => array(
				'title'       => __( 'Checkout service URL', 'checkout-cart-bridge' ),
				'type'        => 'text',
				'description' => __( 'Its base URL, e.g. https://checkout.example.com (or define CHECKOUT_CART_BRIDGE_SERVICE_URL in wp-config.php).', 'checkout-cart-bridge' ),
				'default'     => '',
			),
			'secret'            => array(
				'title'       => __( 'Shared secret', 'checkout-cart-bridge' ),
				'type'        => 'password',
				'description' => __( 'The service\'s STORE_CALLBACK_SECRET (or define CHECKOUT_CART_BRIDGE_STORE_SECRET in wp-config.php). Without it nothing is sent to the service.', 'checkout-cart-bridge' ),
				'default'     => '',
			),
			'capture'           => array(
				'title'       => __( 'Capture', 'checkout-cart-bridge' ),
				'type'        => 'select',
				'description' => __( 'The service\'s STRIPE_CAPTURE. With "manual", orders get a "Capture charge" action; with anything but "automatic", cancelling an unpaid order releases the card authorization.', 'checkout-cart-bridge' ),
				'default'     => 'automatic',
				'options'     => array(
					'automatic'   => __( 'automatic: captured at checkout', 'checkout-cart-bridge' ),
					'on_shipment' => __( 'on_shipment: captured when the order ships', 'checkout-cart-bridge' ),
					'manual'      => __( 'manual: captured from this admin', 'checkout-cart-bridge' ),
				),
			),
		);
	}

	/**
	 * Never at WooCommerce's own checkout: the storefront is headless.
	 *
	 * @return bool
	 */
	public function is_available() {
		return false;
	}

	/**
	 * The "Refund via …" button: only with the service configured, and only for orders paid by card through it.
	 *
	 * @param WC_Order $order Order.
	 * @return bool
	 */
	public function can_refund_order( $order ) {
		return $order instanceof WC_Order
			&& $this->supports( 'refunds' )
			&& checkout_cart_bridge_callbacks_configured()
			&& '' !== (string) $order->get_meta( '_provider_payment_intent_id' );
	}

	/**
	 * Keeps the refund wc_create_refund is creating, for process_refund.
	 *
	 * @param WC_Order_Refund $refund The refund, saved right after this action.
	 */
	public static function remember_refund( $refund ) {
		self::$refund_in_progress = $refund instanceof WC_Order_Refund ? $refund : null;
	}

	/**
	 * The WooCommerce refund being paid back: the one from `woocommerce_create_refund`,
	 * else (another plugin calling process_refund directly) the order's newest refund.
	 *
	 * @param int $order_id Order id.
	 * @return WC_Order_Refund|null
	 */
	private function refund_for( $order_id ) {
		$refund = self::$refund_in_progress;
		if ( $refund instanceof WC_Order_Refund && (int) $refund->get_parent_id() === (int) $order_id && $refund->get_id() > 0 ) {
			return $refund;
		}
		$order   = wc_get_order( $order_id );
		$refunds = $order instanceof WC_Order ? $order->get_refunds() : array();
		return empty( $refunds ) ? null : $refunds[0];
	}

	/**
	 * Refunds at Stripe through the service. A WP_Error makes WooCommerce delete its refund and show the message.
	 *
	 * @param int        $order_id Order id.
	 * @param float|null $amount   Amount, in the order's currency.
	 * @param string     $reason   Reason typed in the admin.
	 * @return bool|WP_Error
	 */
	public function process_refund( $order_id, $amount = null, $reason = '' ) {
		if ( ! checkout_cart_bridge_callbacks_configured() ) {
			return new WP_Error( 'checkout_bridge_not_configured', __( 'Refunds through the checkout service need its URL and shared secret (WooCommerce → Settings → Payments).', 'checkout-cart-bridge' ) );
		}
		$refund = $this->refund_for( $order_id );
		if ( ! $refund ) {
			return new WP_Error( 'checkout_bridge_no_refund', __( 'The refund to pay back was not found.', 'checkout-cart-bridge' ) );
		}
		$answer = checkout_cart_bridge_call_service(
			'refunds',
			array(
				'order_id'  => (int) $order_id,
				'refund_id' => (int) $refund->get_id(),
				'amount'    => wc_format_decimal( null === $amount ? $refund->get_amount() : $amount, wc_get_price_decimals() ),
				'reason'    => (string) $reason,
			)
		);
		if ( is_wp_error( $answer ) ) {
			return $answer;
		}
		$stripe_refund_id = sanitize_text_field( (string) $answer['refund_id'] );
		$refund->update_meta_data( '_provider_refund_id', $stripe_refund_id );
		$refund->save_meta_data();
		$order = wc_get_order( $order_id );
		if ( $order ) {
			/* translators: 1: amount, 2: currency, 3: Stripe refund id. */
			$order->add_order_note( sprintf( __( 'Refunded %1$s %2$s at Stripe (%3$s).', 'checkout-cart-bridge' ), sanitize_text_field( (string) $answer['amount'] ), $order->get_currency(), $stripe_refund_id ) );
		}
		return true;
	}
}
