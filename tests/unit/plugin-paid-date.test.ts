/**
 * The companion plugin's paid-date include (includes/paid-date.php), run with php and WordPress's REST
 * request and WC_Order stubbed: `_date_paid` leaves an order write's meta_data and reaches set_date_paid().
 */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const PAID_DATE_PHP = fileURLToPath(new URL('../../wordpress/checkout-cart-bridge/includes/paid-date.php', import.meta.url));

const STUBS = [
  "define('ABSPATH', '/');",
  'function add_filter() {}',
  'class WP_REST_Request { public $p; private $m; private $r; function __construct($m, $r, $p) { $this->m = $m; $this->r = $r; $this->p = $p; }',
  '  function get_method() { return $this->m; } function get_route() { return $this->r; }',
  '  function get_param($k) { return $this->p[$k] ?? null; } function set_param($k, $v) { $this->p[$k] = $v; } }',
  'class WC_Order { public $paid = array(); function set_date_paid($v) { $this->paid[] = $v; } }',
].join(' ');

function php(code: string): unknown {
  try {
    return JSON.parse(execFileSync('php', ['-r', `${STUBS} require ${JSON.stringify(PAID_DATE_PHP)}; ${code}`], { encoding: 'utf8' }));
  } catch {
    return undefined;
  }
}

const hasPhp = php('echo json_encode(1);') === 1;

/** One request through both hooks, as WordPress and the orders controller run them; what the controller then sees. */
function write(method: string, route: string, meta: unknown[]) {
  return php(`
    $request = new WP_REST_Request(${JSON.stringify(method)}, ${JSON.stringify(route)}, array('meta_data' => json_decode(${JSON.stringify(JSON.stringify(meta))}, true)));
    $response = checkout_cart_bridge_take_date_paid_meta(null, array(), $request);
    $order = checkout_cart_bridge_set_date_paid(new WC_Order(), $request);
    echo json_encode(array('meta' => $request->get_param('meta_data'), 'paid' => $order->paid, 'response' => $response));
  `);
}

describe.skipIf(!hasPhp)("the companion plugin's paid-date include (php)", () => {
  it('takes _date_paid out of an order write and sets the paid date with the setter, the last entry winning, other meta kept', () => {
    expect(
      write('PUT', '/wc/v3/orders/12', [
        { key: 'kept', value: 'yes' },
        { key: '_date_paid', value: '1764000000' },
        { key: '_date_paid', value: '1764115200' },
      ]),
    ).toEqual({ meta: [{ key: 'kept', value: 'yes' }], paid: ['1764115200'], response: null });
    expect(write('POST', '/wc/v2/orders', [{ key: '_date_paid', value: '1764115200' }])).toMatchObject({ meta: [], paid: ['1764115200'] });
  });

  it('leaves reads, other routes and writes without _date_paid as they are', () => {
    const entry = { key: '_date_paid', value: '1764115200' };
    expect(write('GET', '/wc/v3/orders/12', [entry])).toMatchObject({ meta: [entry], paid: [] });
    expect(write('POST', '/wc/v3/orders/12/refunds', [entry])).toMatchObject({ meta: [entry], paid: [] });
    expect(write('PUT', '/wc/v3/customers/2', [entry])).toMatchObject({ meta: [entry], paid: [] });
    expect(write('PUT', '/wc/v3/orders/12', [{ key: 'kept', value: 'yes' }])).toMatchObject({ meta: [{ key: 'kept', value: 'yes' }], paid: [] });
  });

  it("sets the date on its own request's order only", () => {
    expect(
      php(`
        $taken = new WP_REST_Request('PUT', '/wc/v3/orders/12', array('meta_data' => array(array('key' => '_date_paid', 'value' => '1764115200'))));
        checkout_cart_bridge_take_date_paid_meta(null, array(), $taken);
        $other = checkout_cart_bridge_set_date_paid(new WC_Order(), new WP_REST_Request('PUT', '/wc/v3/orders/13', array()));
        $own = checkout_cart_bridge_set_date_paid(new WC_Order(), $taken);
        $again = checkout_cart_bridge_set_date_paid(new WC_Order(), $taken);
        echo json_encode(array($other->paid, $own->paid, $again->paid));
      `),
    ).toEqual([[], ['1764115200'], []]);
  });
});
