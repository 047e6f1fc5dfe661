/**
 * The companion plugin's saved-cards include (includes/stripe-customer.php), run with php and WordPress's
 * user meta stubbed as get_user_option() reads it: the table-prefixed key first, then the plain one.
 */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const STRIPE_CUSTOMER_PHP = fileURLToPath(new URL('../../wordpress/checkout-cart-bridge/includes/stripe-customer.php', import.meta.url));

const STUBS = [
  "define('ABSPATH', '/');",
  'function add_filter() {} function add_action() {}',
  '$GLOBALS["meta"] = array(); $GLOBALS["writes"] = array();',
  'function get_user_option($key, $user) { $m = $GLOBALS["meta"]; return $m["wp_" . $key] ?? ($m[$key] ?? false); }',
  'function update_user_option($user, $key, $value, $global = false) { $GLOBALS["writes"][] = array($user, $key, $global); $GLOBALS["meta"]["wp_" . $key] = $value; return true; }',
  'class WP_User { public $ID; function __construct($id) { $this->ID = $id; } }',
  'class WP_REST_Response { private $data; function __construct($d) { $this->data = $d; } function get_data() { return $this->data; } function set_data($d) { $this->data = $d; } }',
  'class WC_Meta_Data { private $d; function __construct($d) { $this->d = $d; } function get_data() { return $this->d; } }',
].join(' ');

function php(code: string): unknown {
  try {
    return JSON.parse(execFileSync('php', ['-r', `${STUBS} require ${JSON.stringify(STRIPE_CUSTOMER_PHP)}; ${code}`], { encoding: 'utf8' }));
  } catch {
    return undefined;
  }
}

const hasPhp = php('echo json_encode(1);') === 1;

const shown = (meta: Record<string, string>) =>
  php(`
    $GLOBALS["meta"] = ${phpArray(meta)};
    $r = new WP_REST_Response(array('id' => 7, 'meta_data' => array(new WC_Meta_Data(array('id' => 11, 'key' => 'color', 'value' => 'red')), new WC_Meta_Data(array('id' => 12, 'key' => '_stripe_customer_id', 'value' => 'cus_plain')))));
    $r = checkout_cart_bridge_show_stripe_customer($r, new WP_User(7));
    echo json_encode(array_map(function ($m) { return $m instanceof WC_Meta_Data ? $m->get_data() : $m; }, $r->get_data()['meta_data']));
  `);

function phpArray(values: Record<string, string>): string {
  return `array(${Object.entries(values).map(([key, value]) => `${JSON.stringify(key)} => ${JSON.stringify(value)}`).join(', ')})`;
}

const mirrored = (meta: Record<string, string>, key: string, value: string) =>
  php(`
    $GLOBALS["meta"] = ${phpArray(meta)};
    checkout_cart_bridge_mirror_stripe_customer(1, 7, ${JSON.stringify(key)}, ${JSON.stringify(value)});
    echo json_encode(array('meta' => $GLOBALS["meta"], 'writes' => $GLOBALS["writes"]));
  `);

const unprotected = (rest: boolean, key: string, type: string) =>
  php(`
    ${rest ? "define('REST_REQUEST', true);" : ''}
    echo json_encode(!checkout_cart_bridge_unprotect_stripe_customer(true, ${JSON.stringify(key)}, ${JSON.stringify(type)}));
  `);

describe.skipIf(!hasPhp)("the companion plugin's Stripe Customer include (php)", () => {
  // WooCommerce's customers REST API drops protected (underscored) meta on read and write (seen on 10.0.2).
  it('lets the customers REST API read and write _stripe_customer_id, and no other protected key or request', () => {
    expect(unprotected(true, '_stripe_customer_id', 'user')).toBe(true);
    expect(unprotected(true, '_other', 'user')).toBe(false);
    expect(unprotected(true, '_stripe_customer_id', 'post')).toBe(false);
    expect(unprotected(false, '_stripe_customer_id', 'user')).toBe(false);
  });

  it("answers the gateway's prefixed id as _stripe_customer_id, keeping the row's id and the other meta", () => {
    expect(shown({ wp__stripe_customer_id: 'cus_gateway', _stripe_customer_id: 'cus_plain' })).toEqual([
      { id: 11, key: 'color', value: 'red' },
      { id: 12, key: '_stripe_customer_id', value: 'cus_gateway' },
    ]);
  });

  it('leaves the answer alone when the customer has no Stripe Customer', () => {
    expect(shown({})).toEqual([
      { id: 11, key: 'color', value: 'red' },
      { id: 12, key: '_stripe_customer_id', value: 'cus_plain' },
    ]);
  });

  it("copies a written id over the gateway's other prefixed one, and only then", () => {
    expect(mirrored({ wp__stripe_customer_id: 'cus_old', _stripe_customer_id: 'cus_new' }, '_stripe_customer_id', 'cus_new')).toEqual({
      meta: { wp__stripe_customer_id: 'cus_new', _stripe_customer_id: 'cus_new' },
      writes: [[7, '_stripe_customer_id', false]],
    });
    // Without a prefixed key the gateway already reads the plain one.
    expect(mirrored({ _stripe_customer_id: 'cus_new' }, '_stripe_customer_id', 'cus_new')).toMatchObject({ writes: [] });
    expect(mirrored({ wp__stripe_customer_id: 'cus_old' }, 'color', 'blue')).toMatchObject({ writes: [] });
  });
});
