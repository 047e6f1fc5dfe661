/**
 * The companion plugin's `authorized` status (includes/order-status.php), run with php and WordPress's
 * hooks stubbed: where it sits among WooCommerce's statuses, and how it reaches the ShipStation plugin's
 * settings with capture on shipment only (checked on a real store too: docs/integrations/shipstation.md).
 */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ORDER_STATUS_PHP = fileURLToPath(new URL('../../wordpress/checkout-cart-bridge/includes/order-status.php', import.meta.url));

function php(mode: string, code: string): unknown {
  const stubs = [
    "define('ABSPATH', '/');",
    'function add_filter() {}',
    'function _x($text) { return $text; }',
    'function _n_noop($one, $many) { return array($one, $many); }',
    `function checkout_cart_bridge_capture_mode() { return ${JSON.stringify(mode)}; }`,
  ].join(' ');
  try {
    return JSON.parse(execFileSync('php', ['-r', `${stubs} require ${JSON.stringify(ORDER_STATUS_PHP)}; echo json_encode(${code});`], { encoding: 'utf8' }));
  } catch {
    return undefined;
  }
}

const hasPhp = php('automatic', '1') === 1;
const STOCK = "array('wc-pending' => 'P', 'wc-processing' => 'Pr', 'wc-on-hold' => 'H', 'wc-completed' => 'C', 'wc-checkout-draft' => 'D')";

describe.skipIf(!hasPhp)("the companion plugin's `authorized` status (php)", () => {
  it('is an order status right after On hold, and a post status shown in the admin lists', () => {
    expect(Object.keys(php('automatic', `checkout_cart_bridge_add_authorized_status(${STOCK})`) as object)).toEqual([
      'wc-pending',
      'wc-processing',
      'wc-on-hold',
      'wc-authorized',
      'wc-completed',
      'wc-checkout-draft',
    ]);
    expect(php('automatic', "checkout_cart_bridge_register_authorized_status(array())['wc-authorized']")).toMatchObject({
      label: 'Authorized (awaiting shipment)',
      public: false,
      show_in_admin_all_list: true,
      show_in_admin_status_list: true,
    });
  });

  it('with capture on shipment, is exported to ShipStation and mapped to Awaiting Shipment, the shop\'s own choices kept', () => {
    // Not saved yet: the ShipStation plugin's defaults, plus `authorized`.
    expect(php('on_shipment', 'checkout_cart_bridge_shipstation_settings(false)')).toEqual({
      export_statuses: ['wc-processing', 'wc-on-hold', 'wc-completed', 'wc-cancelled', 'wc-authorized'],
      AwaitingShipment_status: ['wc-processing', 'wc-authorized'],
    });
    const saved = "array('export_statuses' => array('wc-processing'), 'AwaitingShipment_status' => array('wc-processing', 'wc-authorized'), 'logging_enabled' => 'no')";
    expect(php('on_shipment', `checkout_cart_bridge_shipstation_settings(${saved})`)).toEqual({
      export_statuses: ['wc-processing', 'wc-authorized'],
      AwaitingShipment_status: ['wc-processing', 'wc-authorized'],
      logging_enabled: 'no',
    });
  });

  it.each(['automatic', 'manual'])('with capture %s, leaves the ShipStation settings as they are', (mode) => {
    expect(php(mode, 'checkout_cart_bridge_shipstation_settings(false)')).toBe(false);
    expect(php(mode, "checkout_cart_bridge_shipstation_settings(array('export_statuses' => array('wc-processing')))")).toEqual({ export_statuses: ['wc-processing'] });
  });
});
