/**
 * A tiny storefront for the demo and the browser tests: one page, served from
 * its own origin, whose script calls the service's checkout endpoints with
 * `fetch` and a JSON body, so the browser really sends the CORS preflight.
 *
 * Like a real storefront server it mints the checkout token itself with the
 * shared secret (`GET /?order=1001`), or takes one (`GET /?token=…`).
 * Not part of the production bundle.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { mintCheckoutToken } from '../../lib/security/checkout-token';
import { listen, listenPreferring, type RunningServer } from './http';

export interface StorefrontOptions {
  /** Base URL of the checkout service, e.g. http://localhost:3000 */
  serviceUrl: string;
  /** Shared checkout-token secret, to mint tokens for `?order=<id>`. */
  tokenSecret?: string;
  /** Listen on this port (0: any free port), or prefer this port when free. */
  port?: number;
  preferredPort?: number;
}

function page(config: { serviceUrl: string; token: string; orderId: string }): string {
  // `<` escaped so no value can close the script element.
  const embedded = JSON.stringify(config).replace(/</g, '\\u003c');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Demo storefront — checkout</title>
<style>
  body { font-family: system-ui, sans-serif; max-width: 720px; margin: 2rem auto; padding: 0 1rem; color: #1f2328; }
  h1 { font-size: 1.4rem; } fieldset { border: 1px solid #d0d7de; border-radius: 8px; margin: 1rem 0; }
  label { display: inline-block; min-width: 8rem; } input { margin: .2rem 0; padding: .3rem; width: 22rem; }
  button { padding: .5rem 1rem; margin-right: .5rem; border-radius: 6px; border: 1px solid #1f6feb; background: #1f6feb; color: #fff; cursor: pointer; }
  button.secondary { background: #fff; color: #1f6feb; }
  #status { padding: .6rem; border-radius: 6px; background: #f6f8fa; }
  #status[data-state="ok"] { background: #dafbe1; } #status[data-state="error"], #status[data-state="blocked"] { background: #ffebe9; }
  pre { background: #f6f8fa; padding: .6rem; overflow-x: auto; font-size: .85rem; } pre:empty { display: none; }
  .origin { color: #57606a; font-size: .9rem; }
</style>
</head>
<body>
<h1>Demo storefront — checkout for order <span id="order-id"></span></h1>
<p class="origin">This page's origin: <code id="page-origin"></code> → checkout service <code id="service-url"></code></p>
<form id="checkout" onsubmit="return false">
  <fieldset><legend>Contact</legend>
    <label for="email">Email</label><input id="email" value="grace@example.com"><br>
    <label for="phone">Phone</label><input id="phone" value="+1 555 0100">
  </fieldset>
  <fieldset><legend>Billing address (also used for shipping)</legend>
    <label for="first_name">First name</label><input id="first_name" value="Grace"><br>
    <label for="last_name">Last name</label><input id="last_name" value="Hopper"><br>
    <label for="address_1">Street</label><input id="address_1" value="1 Harbor Way"><br>
    <label for="city">City</label><input id="city" value="Arlington"><br>
    <label for="state">State</label><input id="state" value="VA"><br>
    <label for="postcode">Postcode</label><input id="postcode" value="22201"><br>
    <label for="country">Country</label><input id="country" value="US">
  </fieldset>
  <label for="token">Checkout token</label><input id="token"><br><br>
  <button id="pay-card" type="button">Pay by card</button>
  <button id="submit-manual" type="button" class="secondary">Pay manually (Zelle / Venmo)</button>
</form>
<p id="status" data-state="idle">Ready.</p>
<pre id="result"></pre>
<script>
const config = ${embedded};
const $ = (id) => document.getElementById(id);
$('order-id').textContent = config.orderId || '?';
$('page-origin').textContent = location.origin;
$('service-url').textContent = config.serviceUrl;
$('token').value = config.token;

function setStatus(state, text) {
  $('status').dataset.state = state;
  $('status').textContent = text;
}

function checkoutBody() {
  const field = (id) => $(id).value.trim();
  return {
    token: field('token'),
    billing_address: {
      first_name: field('first_name'), last_name: field('last_name'), address_1: field('address_1'),
      city: field('city'), state: field('state'), postcode: field('postcode'), country: field('country'),
    },
    shipping_address: null,
    contact_info: { email: field('email'), phone: field('phone') },
  };
}

function money(minor, currency) {
  const digits = new Intl.NumberFormat('en', { style: 'currency', currency }).resolvedOptions().maximumFractionDigits;
  return (minor / 10 ** digits).toFixed(digits) + ' ' + currency;
}

async function call(path) {
  setStatus('working', 'Calling ' + path + ' …');
  $('result').textContent = '';
  let response;
  try {
    response = await fetch(config.serviceUrl + path, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(checkoutBody()),
    });
  } catch (error) {
    setStatus('blocked', 'Blocked by the browser: the service did not allow this origin (CORS). ' + error.message);
    return undefined;
  }
  const body = await response.json().catch(() => null);
  $('result').textContent = JSON.stringify(body, null, 2);
  if (!response.ok) {
    const message = body && (typeof body.error === 'string' ? body.error : body.error && body.error.message);
    setStatus('error', 'HTTP ' + response.status + ': ' + (message || 'request failed'));
    return undefined;
  }
  return body;
}

$('pay-card').addEventListener('click', async () => {
  const body = await call('/api/payment-intent');
  if (body) {
    setStatus('ok', 'Card payment ready: payment intent ' + body.payment_intent_id +
      '. A real storefront now confirms the card with Stripe.js; in the demo run: npm run demo:pay -- ' + config.orderId);
  }
});
$('submit-manual').addEventListener('click', async () => {
  const body = await call('/api/submit-order');
  if (body) {
    setStatus('ok', 'Order #' + body.order_id + ' submitted for manual payment: ' + money(body.total, body.currency) +
      '. Send the payment screenshot to the shop.');
  }
});
</script>
</body>
</html>`;
}

export function storefrontHandler(options: StorefrontOptions) {
  return async (request: IncomingMessage, response: ServerResponse, url: URL): Promise<void> => {
    if (request.method !== 'GET' || url.pathname !== '/') {
      response.writeHead(url.pathname === '/favicon.ico' ? 204 : 404).end();
      return;
    }
    const orderId = url.searchParams.get('order') ?? '';
    let token = url.searchParams.get('token') ?? '';
    if (!token && /^[1-9]\d*$/.test(orderId) && options.tokenSecret) {
      token = await mintCheckoutToken(Number(orderId), { secret: options.tokenSecret, ttl: '30m' });
    }
    const html = page({ serviceUrl: options.serviceUrl.replace(/\/+$/, ''), token, orderId });
    response.writeHead(200, {
      'Content-Type': 'text/html; charset=utf-8',
      'Cache-Control': 'no-store',
      'Content-Length': Buffer.byteLength(html),
    });
    response.end(html);
  };
}

export function startStorefront(options: StorefrontOptions): Promise<RunningServer> {
  const handler = storefrontHandler(options);
  return options.preferredPort
    ? listenPreferring(handler, options.preferredPort, 'storefront')
    : listen(handler, options.port ?? 0, 'storefront');
}
