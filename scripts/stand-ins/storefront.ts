/**
 * A tiny storefront for the demo and the browser tests: one page, served from
 * its own origin, whose script calls the service's checkout endpoints with
 * `fetch` and a JSON body, so the browser really sends the CORS preflight.
 *
 * Like a real storefront server it mints the checkout token itself with the
 * shared secret (`GET /?order=1001`), or takes one (`GET /?token=…`).
 *
 * With the Stripe stand-in configured, "Pay by card" then confirms the payment
 * intent from the browser the way Stripe.js does (publishable key and client
 * secret, a test payment method), and the page waits for the order to change:
 * the Stripe stand-in delivers the signed event to the service by itself.
 * Two demo routes of this server stand for the shop's side, server to server:
 *   GET  /demo/order/<id>  the order from the WooCommerce stand-in's read-only view
 *                          (items, status, and the history of what was written)
 *   POST /demo/ship/<id>   the shipment notification ShipStation would send to the
 *                          service's shipping webhook, with the shipping secret
 * and, with the Stripe webhook secret, what Stripe's dashboard and a cardholder's
 * bank would do (card-lifecycle.ts, the same steps as demo:refund / demo:dispute):
 *   POST /demo/refund/<id>            JSON {"amount": "10.00"} or {} for all that remains
 *   POST /demo/dispute/<id>           opens a dispute on the order's payment
 *   POST /demo/dispute/<id>/won|lost  closes the dispute this server opened
 * each signed and posted to the service's Stripe webhook, so no secret reaches the page.
 * Not part of the production bundle.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { mintCheckoutToken } from '../../lib/security/checkout-token';
import { MoneyError } from '../../lib/money';
import { closeCardDispute, NoCardPaymentError, openCardDispute, refundCardPayment, type CardLifecycleDemo } from './card-lifecycle';
import { listen, listenPreferring, sendJson, type RunningServer } from './http';
import { deliverShipNotification, shipNotification } from './webhooks';

export interface StorefrontOptions {
  /** Base URL of the checkout service, e.g. http://localhost:3000 */
  serviceUrl: string;
  /** Shared checkout-token secret, to mint tokens for `?order=<id>`. */
  tokenSecret?: string;
  /** The Stripe stand-in and its publishable key: "Pay by card" confirms there, as Stripe.js would. */
  stripe?: { url: string; publishableKey: string };
  /** The WooCommerce stand-in: the page shows the order from its read-only view. */
  woocommerceUrl?: string;
  /** The service's shipping webhook secret: the page's "Ship" button plays ShipStation. */
  shippingWebhookSecret?: string;
  /** The service's Stripe webhook signing secret: the page's Refund and Dispute buttons play Stripe (needs `stripe` and `woocommerceUrl`). */
  stripeWebhookSecret?: string;
  /** Listen on this port (0: any free port), or prefer this port when free. */
  port?: number;
  preferredPort?: number;
}

interface PageConfig {
  serviceUrl: string;
  token: string;
  orderId: string;
  stripe: { url: string; publishableKey: string } | null;
  orderView: boolean;
  shipping: boolean;
  cardLifecycle: boolean;
}

function page(config: PageConfig): string {
  // `<` escaped so no value can close the script element.
  const embedded = JSON.stringify(config).replace(/</g, '\\u003c');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Demo storefront — checkout</title>
<style>
  body { font-family: system-ui, sans-serif; max-width: 860px; margin: 1.5rem auto; padding: 0 1rem; color: #1f2328; }
  h1 { font-size: 1.4rem; margin-bottom: .3rem; } h2 { font-size: 1.05rem; margin: 0 0 .6rem; }
  section, fieldset { border: 1px solid #d0d7de; border-radius: 8px; margin: 1rem 0; padding: .8rem 1rem; }
  .columns { display: grid; grid-template-columns: 1fr 1fr; gap: 0 1rem; align-items: start; }
  label { display: inline-block; min-width: 6.5rem; font-size: .9rem; } input { margin: .15rem 0; padding: .25rem; width: 13rem; }
  #token { width: 100%; box-sizing: border-box; font-size: .75rem; color: #57606a; }
  button { padding: .5rem 1rem; margin: .3rem .5rem .3rem 0; border-radius: 6px; border: 1px solid #1f6feb; background: #1f6feb; color: #fff; cursor: pointer; }
  button.secondary { background: #fff; color: #1f6feb; }
  table { border-collapse: collapse; width: 100%; } td { padding: .2rem .4rem; border-bottom: 1px solid #eaeef2; } td.amount { text-align: right; font-variant-numeric: tabular-nums; }
  tr.total td { font-weight: 600; border-bottom: none; }
  .badge { display: inline-block; padding: .1rem .55rem; border-radius: 999px; font-size: .85rem; font-weight: 600; background: #eaeef2; }
  .badge[data-status="pending"] { background: #fff8c5; } .badge[data-status="processing"] { background: #ddf4ff; }
  .badge[data-status="shipped"], .badge[data-status="completed"] { background: #dafbe1; } .badge[data-status="on-hold"], .badge[data-status="failed"] { background: #ffebe9; }
  #card-lifecycle label { min-width: 7.5rem; } #card-lifecycle input { width: 6rem; margin-right: .5rem; } .refund { margin: .25rem 0; }
  .cards label { min-width: 0; margin-right: 1.2rem; }
  #status { padding: .6rem; border-radius: 6px; background: #f6f8fa; }
  #status[data-state="ok"] { background: #dafbe1; } #status[data-state="error"], #status[data-state="blocked"], #status[data-state="declined"] { background: #ffebe9; }
  #timeline { list-style: none; padding: 0; margin: 0; } #timeline li { border-left: 3px solid #d0d7de; padding: .2rem 0 .5rem .8rem; margin-left: .3rem; }
  #timeline time { color: #57606a; font-size: .8rem; margin-right: .5rem; } .note { margin: .25rem 0; font-style: italic; }
  .meta { margin: .2rem 0 0; padding: 0; list-style: none; font-family: ui-monospace, monospace; font-size: .78rem; color: #57606a; }
  pre { background: #f6f8fa; padding: .6rem; overflow-x: auto; font-size: .8rem; } pre:empty { display: none; }
  .origin, .hint { color: #57606a; font-size: .85rem; }
</style>
</head>
<body>
<h1>Demo storefront — checkout for order <span id="order-id"></span></h1>
<p class="origin">This page's origin: <code id="page-origin"></code> → checkout service <code id="service-url"></code></p>
<section id="order" hidden>
  <h2>Your order <span id="order-status" class="badge"></span></h2>
  <table><tbody id="order-lines"></tbody></table>
</section>
<form id="checkout" onsubmit="return false">
  <div class="columns">
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
  </div>
  <fieldset class="cards" id="card-choice"><legend>Test card (Stripe test payment methods)</legend>
    <label><input type="radio" name="card" value="pm_card_visa" checked style="width:auto"> Visa •••• 4242 — succeeds</label>
    <label><input type="radio" name="card" value="pm_card_chargeDeclined" style="width:auto"> Visa •••• 0002 — declined</label>
  </fieldset>
  <label for="token">Checkout token</label><input id="token"><br>
  <button id="pay-card" type="button">Pay by card</button>
  <button id="submit-manual" type="button" class="secondary">Pay manually (Zelle / Venmo)</button>
</form>
<p id="status" data-state="idle">Ready.</p>
<section id="history" hidden>
  <h2>What happened to the order</h2>
  <p class="hint">Read from the shop (WooCommerce stand-in): each status change, note to the customer, meta entry, refund and private note the service wrote.</p>
  <ol id="timeline"></ol>
</section>
<section id="back-office" hidden>
  <h2>Shop back office (demo)</h2>
  <p class="hint">ShipStation tells the service a parcel left: a shipment notification to its shipping webhook, with the shipping secret. Only a paid order becomes shipped.</p>
  <div id="shipping-actions"><button id="ship" type="button" class="secondary">Ship it (ShipStation notification)</button></div>
  <div id="card-lifecycle">
    <p class="hint">Stripe's side: a refund made in the Stripe dashboard, a cardholder's dispute and its outcome, each a signed event to the service's card webhook.</p>
    <label for="refund-amount">Refund amount</label><input id="refund-amount" placeholder="all" inputmode="decimal">
    <button id="refund" type="button" class="secondary">Refund</button>
    <button id="dispute" type="button" class="secondary">Dispute</button>
    <button id="dispute-won" type="button" class="secondary">Dispute won</button>
    <button id="dispute-lost" type="button" class="secondary">Dispute lost</button>
  </div>
</section>
<details><summary class="hint">Last answer from the checkout service</summary><pre id="result"></pre></details>
<script>
const config = ${embedded};
const $ = (id) => document.getElementById(id);
$('order-id').textContent = config.orderId || '?';
$('page-origin').textContent = location.origin;
$('service-url').textContent = config.serviceUrl;
$('token').value = config.token;
$('card-choice').hidden = !config.stripe;
$('back-office').hidden = !((config.shipping || config.cardLifecycle) && config.orderId);
$('shipping-actions').hidden = !config.shipping;
$('card-lifecycle').hidden = !config.cardLifecycle;

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

function element(tag, text, className) {
  const node = document.createElement(tag);
  if (text !== undefined) node.textContent = text;
  if (className) node.className = className;
  return node;
}

// The order as the shop holds it; every value is written with textContent.
let order;
function renderOrder() {
  $('order').hidden = false;
  $('order-status').textContent = order.status;
  $('order-status').dataset.status = order.status;
  const rows = order.items.map((item) => [item.name + ' × ' + item.quantity, item.total])
    .concat(order.fees.map((fee) => [fee.name, fee.total]));
  if (Number(order.shipping_total) > 0) rows.push(['Shipping', order.shipping_total]);
  if (Number(order.total_tax) > 0) rows.push(['Tax', order.total_tax]);
  rows.push(['Total', order.total]);
  for (const refund of order.refunds) rows.push(['Refund #' + refund.id, '−' + refund.amount]);
  const totalRow = rows.findIndex(([label]) => label === 'Total');
  $('order-lines').replaceChildren(...rows.map(([label, amount], index) => {
    const row = element('tr', undefined, index === totalRow ? 'total' : '');
    row.append(element('td', label), element('td', amount + ' ' + order.currency, 'amount'));
    return row;
  }));
  $('history').hidden = false;
  const firstChange = order.history.find((write) => write.status);
  const placedStatus = element('span', firstChange ? firstChange.status.from : order.status, 'badge');
  placedStatus.dataset.status = placedStatus.textContent;
  const placed = element('li');
  placed.append(element('time', order.date_created.replace('T', ' ')), element('span', 'Order placed: '), placedStatus);
  $('timeline').replaceChildren(placed, ...order.history.map((write) => {
    const item = element('li');
    item.append(element('time', write.at.replace('T', ' ').slice(0, 19)));
    if (write.status) {
      const to = element('span', write.status.to, 'badge');
      to.dataset.status = write.status.to;
      item.append(element('span', 'Status ' + write.status.from + ' → '), to);
    } else if (write.refund) {
      item.append(element('span', 'Refund recorded'));
    } else if (write.refund_removed) {
      item.append(element('span', 'Refund removed'));
    } else if (write.note) {
      item.append(element('span', 'Order note added'));
    } else {
      item.append(element('span', 'Order updated'));
    }
    if (write.refund) {
      item.append(element('p', 'Refund #' + write.refund.id + ': ' + write.refund.amount + ' ' + order.currency + (write.refund.reason ? ' — ' + write.refund.reason : ''), 'refund'));
    }
    if (write.refund_removed) item.append(element('p', 'Refund #' + write.refund_removed.id + ' of ' + write.refund_removed.amount + ' ' + order.currency + ' removed', 'refund'));
    if (write.note) {
      item.append(element('p', (write.note.customer_note ? 'Order note to the customer: “' : 'Private note for the shop: “') + write.note.note + '”', 'note'));
    }
    if (write.customer_note !== undefined) item.append(element('p', 'Note to the customer: “' + write.customer_note + '”', 'note'));
    if (write.meta.length) {
      const list = element('ul', undefined, 'meta');
      list.append(...write.meta.map((entry) => element('li', entry.key + ' = ' + (typeof entry.value === 'string' ? entry.value : JSON.stringify(entry.value)))));
      item.append(list);
    }
    return item;
  }));
}

async function loadOrder() {
  if (!config.orderView || !config.orderId) return undefined;
  try {
    const response = await fetch('/demo/order/' + encodeURIComponent(config.orderId), { cache: 'no-store' });
    if (!response.ok) return undefined;
    order = await response.json();
    renderOrder();
    return order;
  } catch {
    return undefined;
  }
}

/** Polls the shop until the order satisfies the condition (what a thank-you page does while the webhook arrives). */
async function waitForOrder(condition, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const current = await loadOrder();
    if (current && condition(current)) return current;
    await new Promise((resolve) => setTimeout(resolve, 400));
  }
  return undefined;
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

/** What stripe.confirmCardPayment(clientSecret, {payment_method}) sends: a form post with the publishable key. */
async function confirmWithStripe(intentId, clientSecret, paymentMethod) {
  const form = new URLSearchParams({
    payment_method: paymentMethod,
    expected_payment_method_type: 'card',
    use_stripe_sdk: 'true',
    key: config.stripe.publishableKey,
    client_secret: clientSecret,
  });
  const response = await fetch(config.stripe.url + '/v1/payment_intents/' + encodeURIComponent(intentId) + '/confirm', {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: form,
  });
  const body = await response.json().catch(() => null);
  return response.ok ? { paymentIntent: body } : { error: (body && body.error) || { message: 'HTTP ' + response.status } };
}

$('pay-card').addEventListener('click', async () => {
  const body = await call('/api/payment-intent');
  if (!body) return;
  if (!config.stripe) {
    setStatus('ok', 'Card payment ready: payment intent ' + body.payment_intent_id +
      '. A real storefront now confirms the card with Stripe.js; in the demo run: npm run demo:pay -- ' + config.orderId);
    return;
  }
  const card = document.querySelector('input[name="card"]:checked').value;
  const failedBefore = order && order.meta._payment_failed_at;
  setStatus('working', 'Confirming the card with Stripe (payment intent ' + body.payment_intent_id + ') …');
  let result;
  try {
    result = await confirmWithStripe(body.payment_intent_id, body.client_secret, card);
  } catch (error) {
    setStatus('error', 'Could not reach Stripe: ' + error.message);
    return;
  }
  if (result.paymentIntent && result.paymentIntent.status === 'succeeded') {
    setStatus('working', 'Stripe accepted the card. Waiting for the shop to record the payment …');
    const paid = await waitForOrder((current) => current.status !== 'pending', 20000);
    if (paid) setStatus('ok', 'Payment received: order #' + paid.id + ' is now ' + paid.status + '.');
    else setStatus('error', 'Stripe took the payment, but the order is still pending: the webhook has not arrived (yet).');
    return;
  }
  const message = (result.error && result.error.message) || 'The card was not accepted.';
  setStatus('working', 'Stripe declined the card: ' + message + ' Waiting for the shop to note it …');
  const noted = await waitForOrder((current) => current.meta._payment_failed_at && current.meta._payment_failed_at !== failedBefore, 20000);
  setStatus('declined', 'Card declined: ' + message + (noted
    ? ' The order stays ' + noted.status + '. Note to the customer: “' + noted.customer_note + '”'
    : ' The shop has not noted the failure (yet).'));
});

$('submit-manual').addEventListener('click', async () => {
  const body = await call('/api/submit-order');
  if (body) {
    setStatus('ok', 'Order #' + body.order_id + ' submitted for manual payment: ' + money(body.total, body.currency) +
      '. Send the payment screenshot to the shop.');
    loadOrder();
  }
});

$('ship').addEventListener('click', async () => {
  setStatus('working', 'ShipStation is notifying the service …');
  const response = await fetch('/demo/ship/' + encodeURIComponent(config.orderId), { method: 'POST' });
  const delivery = await response.json().catch(() => null);
  $('result').textContent = JSON.stringify(delivery, null, 2);
  if (!response.ok || !delivery || delivery.status !== 200) {
    setStatus('error', 'The shipping webhook answered HTTP ' + (delivery ? delivery.status : response.status) + '.');
    return;
  }
  const shipped = await waitForOrder((current) => current.status === 'shipped', 3000);
  if (shipped) setStatus('ok', 'Shipped: ' + shipped.customer_note);
  else setStatus('error', 'The service took the notification but left the order ' + (order ? order.status : 'unchanged') + ': only a paid order is shipped.');
});

/** A back-office button of this page's server; answers what the service's card webhook answered, or shows why not. */
async function cardAction(path, body, working) {
  setStatus('working', working);
  let response;
  try {
    response = await fetch(path, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
  } catch (error) {
    setStatus('error', 'The storefront server did not answer: ' + error.message);
    return undefined;
  }
  const answer = await response.json().catch(() => null);
  $('result').textContent = JSON.stringify(answer, null, 2);
  if (!response.ok || !answer) {
    setStatus('error', (answer && answer.message) || 'HTTP ' + response.status);
    return undefined;
  }
  if (answer.delivery.status !== 200) {
    setStatus('error', 'The card webhook answered HTTP ' + answer.delivery.status + '.');
    return undefined;
  }
  return answer;
}

const orderPath = (action) => '/demo/' + action + '/' + encodeURIComponent(config.orderId);

$('refund').addEventListener('click', async () => {
  const amount = $('refund-amount').value.trim();
  const refundsBefore = order ? order.refunds.length : 0;
  const answer = await cardAction(orderPath('refund'), amount ? { amount } : {},
    'Stripe refunds ' + (amount ? amount + ' ' + (order ? order.currency : '') : 'all that remains') + ' and tells the service …');
  if (!answer) return;
  const refunded = await waitForOrder((current) => current.refunds.length > refundsBefore, 5000);
  if (!refunded) {
    setStatus('error', 'The service took the refund event but recorded no refund (are CARD_LIFECYCLE_EVENTS=refunds on?).');
    return;
  }
  $('refund-amount').value = '';
  const latest = refunded.refunds[refunded.refunds.length - 1];
  setStatus('ok', 'Refund of ' + latest.amount + ' ' + refunded.currency + ' recorded: order #' + refunded.id + ' is now ' + refunded.status + '.');
});

$('dispute').addEventListener('click', async () => {
  const answer = await cardAction(orderPath('dispute'), {}, 'The cardholder disputes the payment; Stripe tells the service …');
  if (!answer) return;
  const held = await waitForOrder((current) => current.meta._dispute_id === answer.dispute_id, 5000);
  if (held) setStatus('ok', 'Dispute ' + answer.dispute_id + ' opened: order #' + held.id + ' is now ' + held.status + '.');
  else setStatus('error', 'The service took the dispute event but did not record it (are CARD_LIFECYCLE_EVENTS=disputes on?).');
});

for (const outcome of ['won', 'lost']) {
  $('dispute-' + outcome).addEventListener('click', async () => {
    const answer = await cardAction(orderPath('dispute') + '/' + outcome, {}, 'Stripe closes the dispute (' + outcome + ') and tells the service …');
    if (!answer) return;
    const closed = await waitForOrder((current) => current.meta._dispute_status === outcome, 5000);
    if (closed) setStatus('ok', 'Dispute ' + answer.dispute_id + ' ' + outcome + ': order #' + closed.id + ' is now ' + closed.status + '.');
    else setStatus('error', 'The service took the dispute outcome but did not record it.');
  });
}

loadOrder();
setInterval(() => { if (document.visibilityState === 'visible') loadOrder(); }, 3000);
</script>
</body>
</html>`;
}

const ORDER_PATH = /^\/demo\/(order|ship)\/([1-9]\d{0,8})$/;
const LIFECYCLE_PATH = /^\/demo\/(refund|dispute)\/([1-9]\d{0,8})(?:\/(won|lost))?$/;
const AMOUNT = /^\d{1,9}(\.\d{1,3})?$/;

/** The page's Refund and Dispute buttons, done on this server: the answer says what the service's webhook answered. */
async function cardLifecycleAction(
  demo: CardLifecycleDemo,
  openDisputes: Map<number, string>,
  action: { kind: 'refund' | 'dispute'; orderId: number; outcome?: 'won' | 'lost' },
  body: string,
): Promise<{ status: number; body: unknown }> {
  try {
    if (action.kind === 'refund') {
      let amount: unknown;
      try {
        amount = (JSON.parse(body || '{}') as { amount?: unknown }).amount;
      } catch {
        return { status: 400, body: { message: 'The body is not JSON.' } };
      }
      if (amount !== undefined && (typeof amount !== 'string' || !AMOUNT.test(amount))) {
        return { status: 400, body: { message: 'The amount is a decimal such as 10.00.' } };
      }
      const done = await refundCardPayment(demo, action.orderId, amount as string | undefined);
      return { status: 200, body: { delivery: done.delivery } };
    }
    if (!action.outcome) {
      const opened = await openCardDispute(demo, action.orderId);
      openDisputes.set(action.orderId, opened.disputeId);
      return { status: 200, body: { dispute_id: opened.disputeId, delivery: opened.delivery } };
    }
    const disputeId = openDisputes.get(action.orderId);
    if (!disputeId) return { status: 409, body: { message: `No open dispute on order ${action.orderId}: open one first.` } };
    const delivery = await closeCardDispute(demo, disputeId, action.outcome);
    openDisputes.delete(action.orderId);
    return { status: 200, body: { dispute_id: disputeId, delivery } };
  } catch (error) {
    if (error instanceof NoCardPaymentError) return { status: 409, body: { message: error.message } };
    if (error instanceof MoneyError) return { status: 400, body: { message: error.message } };
    // The stand-ins' own refusals (e.g. more than remains to refund): their message, never a secret.
    return { status: 502, body: { message: error instanceof Error ? error.message : 'failed' } };
  }
}

export function storefrontHandler(options: StorefrontOptions) {
  const serviceUrl = options.serviceUrl.replace(/\/+$/, '');
  const lifecycle: CardLifecycleDemo | undefined =
    options.stripeWebhookSecret && options.stripe && options.woocommerceUrl
      ? { serviceUrl, stripeUrl: options.stripe.url, woocommerceUrl: options.woocommerceUrl, stripeWebhookSecret: options.stripeWebhookSecret }
      : undefined;
  // Disputes this server opened and has not closed yet, by order id.
  const openDisputes = new Map<number, string>();
  return async (request: IncomingMessage, response: ServerResponse, url: URL, body: string): Promise<void> => {
    const action = LIFECYCLE_PATH.exec(url.pathname);
    if (action && request.method === 'POST' && lifecycle) {
      const [, kind, orderId, outcome] = action;
      const answer = await cardLifecycleAction(
        lifecycle,
        openDisputes,
        { kind: kind as 'refund' | 'dispute', orderId: Number(orderId), ...(outcome ? { outcome: outcome as 'won' | 'lost' } : {}) },
        body,
      );
      sendJson(response, answer.status, answer.body);
      return;
    }
    const demo = ORDER_PATH.exec(url.pathname);
    if (demo && demo[1] === 'order' && request.method === 'GET' && options.woocommerceUrl) {
      // Server to server, as a storefront reads the shop: the page never talks to WooCommerce itself.
      const view = await fetch(`${options.woocommerceUrl.replace(/\/+$/, '')}/demo/orders/${demo[2]}`);
      sendJson(response, view.status, await view.json(), { 'Cache-Control': 'no-store' });
      return;
    }
    if (demo && demo[1] === 'ship' && request.method === 'POST' && options.shippingWebhookSecret) {
      const delivery = await deliverShipNotification(serviceUrl, shipNotification({ orderId: Number(demo[2]) }), options.shippingWebhookSecret);
      sendJson(response, 200, delivery);
      return;
    }
    if (request.method !== 'GET' || url.pathname !== '/') {
      response.writeHead(url.pathname === '/favicon.ico' ? 204 : 404).end();
      return;
    }
    const orderId = url.searchParams.get('order') ?? '';
    let token = url.searchParams.get('token') ?? '';
    if (!token && /^[1-9]\d*$/.test(orderId) && options.tokenSecret) {
      token = await mintCheckoutToken(Number(orderId), { secret: options.tokenSecret, ttl: '30m' });
    }
    const html = page({
      serviceUrl,
      token,
      orderId: /^[1-9]\d*$/.test(orderId) ? orderId : '',
      stripe: options.stripe ? { url: options.stripe.url.replace(/\/+$/, ''), publishableKey: options.stripe.publishableKey } : null,
      orderView: Boolean(options.woocommerceUrl),
      shipping: Boolean(options.shippingWebhookSecret),
      cardLifecycle: Boolean(lifecycle),
    });
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
