/**
 * A tiny storefront for the demo and the browser tests: one page, served from
 * its own origin, whose script calls the service's checkout endpoints with
 * `fetch` and a JSON body, so the browser really sends the CORS preflight.
 *
 * Like a real storefront server it mints the checkout token itself with the
 * shared secret (`GET /?order=1001`), or takes one (`GET /?token=…`). `GET /`
 * alone lists the demo orders; an order the shop does not hold is said to be
 * missing.
 *
 * With the Stripe stand-in configured, "Pay by card" then confirms the payment
 * intent from the browser the way Stripe.js does (publishable key and client
 * secret, a test payment method), and the page waits for the order to change:
 * the Stripe stand-in delivers the signed event to the service by itself.
 * Two demo routes of this server stand for the shop's side, server to server:
 *   GET  /demo/order/<id>  the order from the WooCommerce stand-in's read-only view
 *                          (items, status, dates, and the history of what was written)
 *   POST /demo/ship/<id>   the shipment notification ShipStation would send to the
 *                          service's shipping webhook, with the shipping secret
 * and, with the Stripe webhook secret, what Stripe's dashboard and a cardholder's
 * bank would do (card-lifecycle.ts, the same steps as demo:refund / demo:dispute):
 *   POST /demo/refund/<id>            JSON {"amount": "10.00"} or {} for all that remains
 *   POST /demo/dispute/<id>           opens a dispute on the order's payment
 *   POST /demo/dispute/<id>/won|lost  closes the order's open dispute
 *   POST /demo/admin-refund/<id>      JSON {"amount": "10.00"} or {}: the shop owner's refund in the WooCommerce
 *                                     admin, through the companion plugin's gateway to the service's /api/store/refunds
 *   POST /demo/review/<id>[/approved] Stripe Radar opens a review of the order's payment, or the shop approves it
 * each signed and posted to the service's Stripe webhook, so no secret reaches the page.
 *
 * The page tells the order's story: every date as the shop holds it, with its
 * zone; the result of each action beside the action; a back-office button only
 * enabled when its action applies to the order as it is now, else saying why.
 * What it shows is in plain words: a stand-in's URL or internal message never
 * reaches it. Not part of the production bundle.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { mintCheckoutToken } from '../../lib/security/checkout-token';
import { MoneyError } from '../../lib/errors';
import {
  closeCardDispute,
  DemoCallError,
  NoCardPaymentError,
  NoOpenDisputeError,
  openCardDispute,
  openDisputeOf,
  refundCardPayment,
  refundFromShopAdmin,
  openRadarReview,
  approveRadarReview,
  NoOpenReviewError,
  ShopRefundRefusedError,
  type CardLifecycleDemo,
} from './card-lifecycle';
import { DEMO_SECRETS } from './world';
import { stripeJsStandIn } from '../stripe/stripe-js';
import { listen, listenPreferring, sendJson, type RunningServer } from '../loopback-http';
import { deliverShipNotification, shipNotification } from '../webhook-deliveries';

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
  /**
   * The WooCommerce stand-in's REST credentials: the page's "Refund from the shop admin" makes the refund
   * there as the admin does (demo ones by default); the stand-in's gateway then asks the service.
   */
  woocommerceCredentials?: { consumerKey: string; consumerSecret: string };
  /** The seeded orders and what each is for (`shows`, true whatever its status): `/` without an order lists them. */
  demoOrders?: readonly { id: number; shows: string }[];
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
  /** The order as the shop held it when the page was served: shown at once, before the page asks again. */
  order: unknown;
  shipping: boolean;
  cardLifecycle: boolean;
}

/** The order as the WooCommerce stand-in's read-only view shows it (the fields the pages read). */
interface OrderView {
  id: number;
  status: string;
  currency: string;
  total: string;
}

const STYLE = `
  body { font-family: system-ui, sans-serif; max-width: 860px; margin: 1.5rem auto; padding: 0 1rem; color: #1f2328; }
  h1 { font-size: 1.4rem; margin-bottom: .3rem; } h2 { font-size: 1.05rem; margin: 0 0 .6rem; }
  a { color: #0969da; }
  section, fieldset { border: 1px solid #d0d7de; border-radius: 8px; margin: 1rem 0; padding: .8rem 1rem; }
  /* A fieldset is never narrower than its content unless told: on a phone it pushed the page sideways. */
  fieldset { min-width: 0; }
  .columns { display: grid; grid-template-columns: repeat(auto-fit, minmax(min(100%, 20rem), 1fr)); gap: 0 1rem; align-items: start; }
  label { display: inline-block; min-width: 6.5rem; font-size: .9rem; } input { margin: .15rem 0; padding: .25rem; width: 13rem; max-width: 100%; box-sizing: border-box; }
  #token { width: 100%; box-sizing: border-box; font-size: .75rem; color: #57606a; }
  button { padding: .5rem 1rem; margin: .3rem .5rem .3rem 0; border-radius: 6px; border: 1px solid #1f6feb; background: #1f6feb; color: #fff; cursor: pointer; }
  button.secondary { background: #fff; color: #1f6feb; }
  button:disabled { border-color: #d0d7de; background: #f6f8fa; color: #8c959f; cursor: not-allowed; }
  table { border-collapse: collapse; width: 100%; } td, th { padding: .2rem .4rem; border-bottom: 1px solid #eaeef2; text-align: left; }
  td.amount, th.amount { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
  #timeline, .result, td { overflow-wrap: anywhere; }
  tr.total td { font-weight: 600; border-bottom: none; }
  dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: .15rem .8rem; margin: .7rem 0 0; font-size: .9rem; }
  dl.facts dt { color: #57606a; } dl.facts dd { margin: 0; }
  .badge { display: inline-block; padding: .1rem .55rem; border-radius: 999px; font-size: .85rem; font-weight: 600; background: #eaeef2; }
  .badge[data-status="pending"] { background: #fff8c5; } .badge[data-status="processing"] { background: #ddf4ff; }
  .badge[data-status="shipped"], .badge[data-status="completed"] { background: #dafbe1; }
  .badge[data-status="on-hold"], .badge[data-status="failed"], .badge[data-status="refunded"] { background: #ffebe9; }
  .cards label { min-width: 0; margin-right: 1.2rem; }
  .action { display: flex; align-items: center; gap: .2rem .6rem; flex-wrap: wrap; margin: .2rem 0; }
  .action input { width: 6rem; }
  .why { color: #57606a; font-size: .82rem; }
  .result { padding: .6rem; border-radius: 6px; background: #f6f8fa; margin: .6rem 0 0; }
  .result:empty { display: none; }
  .result[data-state="ok"] { background: #dafbe1; }
  .result[data-state="error"], .result[data-state="blocked"], .result[data-state="declined"] { background: #ffebe9; }
  .result[data-state="working"]::before { content: ""; display: inline-block; width: .75em; height: .75em; margin-right: .5em; vertical-align: -.05em;
    border: 2px solid #8c959f; border-top-color: transparent; border-radius: 50%; animation: spin 1s linear infinite; }
  @keyframes spin { to { transform: rotate(360deg); } }
  #timeline { list-style: none; padding: 0; margin: 0; } #timeline li { border-left: 3px solid #d0d7de; padding: .2rem 0 .5rem .8rem; margin-left: .3rem; }
  #timeline time { color: #57606a; font-size: .8rem; margin-right: .5rem; } .note { margin: .25rem 0; font-style: italic; }
  .meta { margin: .2rem 0 0; padding: 0; list-style: none; font-family: ui-monospace, monospace; font-size: .78rem; color: #57606a; }
  pre { background: #f6f8fa; padding: .6rem; overflow-x: auto; font-size: .8rem; } pre:empty { display: none; }
  .origin, .hint { color: #57606a; font-size: .85rem; }
  .notice { padding: .8rem 1rem; border-radius: 8px; background: #fff8c5; }
`;

const escapeHtml = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string);

function layout(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<link rel="icon" href="data:,">
<style>${STYLE}</style>
</head>
<body>
${body}
</body>
</html>`;
}

/**
 * `/` without an order, or with one the shop does not hold: the demo orders, each a link to its checkout, each
 * with its status and total as the shop holds them now (the description says nothing a payment could change).
 */
function ordersPage(orders: readonly { id: number; shows: string; view?: OrderView }[], notice?: string): string {
  const rows = orders
    .map(({ id, shows, view }) => {
      const status = view ? `<span class="badge" data-status="${escapeHtml(view.status)}">${escapeHtml(view.status)}</span>` : '';
      const total = view ? `${escapeHtml(view.total)} ${escapeHtml(view.currency)}` : '';
      return `<tr><td><a href="/?order=${id}">#${id}</a></td><td>${escapeHtml(shows)}</td><td>${status}</td><td class="amount">${total}</td></tr>`;
    })
    .join('\n');
  return layout(
    'Demo storefront — orders',
    `<h1>Demo storefront — the demo orders</h1>
${notice ? `<p id="notice" class="notice" role="alert">${escapeHtml(notice)}</p>` : ''}
<p class="hint">Pick an order to check it out, pay it and follow it through the shop's back office.</p>
<section id="orders">
<table><thead><tr><th>Order</th><th>What it shows</th><th>Status</th><th class="amount">Total</th></tr></thead>
<tbody>
${rows || '<tr><td colspan="4">No demo orders.</td></tr>'}
</tbody></table>
</section>`,
  );
}

function checkoutPage(config: PageConfig): string {
  // `<` escaped so no value can close the script element.
  const embedded = JSON.stringify(config).replace(/</g, '\\u003c');
  const title = config.orderId ? `order #${config.orderId}` : 'the order in the token';
  return layout(
    `Demo storefront — checkout for ${title}`,
    `<h1>Demo storefront — checkout for <span id="order-title">${escapeHtml(title)}</span></h1>
<p class="origin">This page's origin: <code id="page-origin"></code> → checkout service <code id="service-url"></code>. <a href="/">All demo orders</a></p>
<section id="order" hidden>
  <h2>Your order <span id="order-id"></span> <span id="order-status" class="badge"></span></h2>
  <table><tbody id="order-lines"></tbody></table>
  <dl class="facts" id="order-facts"></dl>
</section>
<form id="checkout" onsubmit="return false">
  <fieldset id="express" hidden><legend>Express checkout (Apple Pay, Google Pay: the wallet is played by the Stripe stand-in)</legend>
    <p class="hint">The wallet reports an address before the customer authorizes: the shop's rates there come from the checkout service, each rate chosen is written to the order, and the wallet's total is always the order's.</p>
    <div id="wallet"></div>
    <p id="wallet-status" class="result" role="status" aria-live="polite" data-state="idle"></p>
  </fieldset>
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
    <div id="saved-cards" hidden>
      <p class="hint">A registered customer: the checkout service answers a customer session with the payment intent, and Stripe lists the cards saved before.</p>
      <button id="show-saved" type="button" class="secondary">Show my saved cards</button>
      <label><input type="checkbox" id="save-card" style="width:auto"> Save this card for my next order</label>
    </div>
  </fieldset>
  <label for="token">Checkout token</label><input id="token"><br>
  <button id="pay-card" type="button">Pay by card</button>
  <button id="submit-manual" type="button" class="secondary">Pay manually (Zelle / Venmo)</button>
  <p id="status" class="result" role="status" aria-live="polite" data-state="idle"></p>
</form>
<section id="back-office" hidden>
  <h2>Shop back office (demo)</h2>
  <div id="shipping-actions">
    <p class="hint">ShipStation tells the service a parcel left: a shipment notification to its shipping webhook, with the shipping secret.</p>
    <div class="action"><button id="ship" type="button" class="secondary">Ship it (ShipStation notification)</button><span class="why" id="ship-why"></span></div>
  </div>
  <div id="card-lifecycle">
    <p class="hint">Stripe's side: a refund made in the Stripe dashboard, a cardholder's dispute and its outcome, a Radar review, each a signed event to the service's card webhook. The shop's side: a refund in the WooCommerce admin, which the Checkout Bridge plugin asks the service to make at Stripe (signed with the store callback secret).</p>
    <div class="action"><label for="refund-amount">Refund amount</label><input id="refund-amount" placeholder="all" inputmode="decimal"><button id="refund" type="button" class="secondary">Refund</button><span class="why" id="refund-why"></span></div>
    <div class="action"><button id="admin-refund" type="button" class="secondary">Refund from the shop admin</button><span class="why" id="admin-refund-why"></span></div>
    <div class="action"><button id="dispute" type="button" class="secondary">Dispute</button><span class="why" id="dispute-why"></span></div>
    <div class="action"><button id="dispute-won" type="button" class="secondary">Dispute won</button><button id="dispute-lost" type="button" class="secondary">Dispute lost</button><span class="why" id="dispute-outcome-why"></span></div>
    <div class="action"><button id="review" type="button" class="secondary">Radar review</button><button id="review-approved" type="button" class="secondary">Review approved</button><span class="why" id="review-why"></span></div>
  </div>
  <p id="office-status" class="result" role="status" aria-live="polite" data-state="idle"></p>
</section>
<section id="history" hidden>
  <h2>What happened to the order</h2>
  <p class="hint">Read from the shop (WooCommerce stand-in): each status change, note to the customer, meta entry, refund and private note the service wrote. Times are the shop's, in UTC.</p>
  <ol id="timeline"></ol>
</section>
<details><summary class="hint">Last answer from the checkout service</summary><pre id="result"></pre></details>
${config.stripe ? '<script src="/demo/stripe.js"></script>' : ''}
<script>
const config = ${embedded};
${PAGE_SCRIPT}
${config.stripe ? WALLET_SCRIPT : ''}
</script>`,
  );
}

/**
 * Express checkout on the page: Stripe's Express Checkout Element as Stripe.js creates it, its wallet played
 * by the Stripe stand-in's Stripe.js (served at /demo/stripe.js), its handlers calling the service as a storefront does.
 */
const WALLET_SCRIPT = String.raw`
async function post(path, body) {
  const response = await fetch(config.serviceUrl + path, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
  const answer = await response.json().catch(() => null);
  $('result').textContent = JSON.stringify(answer, null, 2);
  if (!response.ok) {
    const message = answer && (typeof answer.error === 'string' ? answer.error : answer.error && answer.error.message);
    throw new Error('HTTP ' + response.status + ': ' + (message || 'the checkout service refused the request'));
  }
  return answer;
}

function walletAddressOf(name, address, contact) {
  const [first, ...rest] = name.trim().split(/\s+/);
  return { first_name: first, last_name: rest.join(' '), address_1: address.line1, address_2: address.line2 || '', city: address.city,
    state: address.state, postcode: address.postal_code, country: address.country, ...contact };
}

function startWallet(start) {
  const digits = digitsOf(start.currency);
  const stripe = Stripe(config.stripe.publishableKey);
  const elements = stripe.elements({ mode: 'payment', amount: toMinor(start.total, digits), currency: start.currency.toLowerCase() });
  const wallet = elements.create('expressCheckout', { emailRequired: true, phoneNumberRequired: true, shippingAddressRequired: true, billingAddressRequired: true });
  let at;
  const place = (a) => [a.city, a.state, a.postal_code, a.country].filter(Boolean).join(', ');

  // Within a second, with what the order holds now: the wallet must be given a rate before it reports an address.
  wallet.on('click', (event) => {
    const items = start.items.reduce((sum, item) => sum + toMinor(item.total, digits), 0);
    event.resolve({
      shippingRates: [{ id: 'current', displayName: 'Shipping', amount: toMinor(start.shipping_total, digits) }],
      lineItems: [{ name: 'Subtotal', amount: items }, { name: 'Shipping', amount: toMinor(start.shipping_total, digits) }],
    });
  });
  wallet.on('shippingaddresschange', async (event) => {
    const address = { country: event.address.country, state: event.address.state, postal_code: event.address.postal_code, city: event.address.city };
    show('wallet-status', 'working', 'The wallet reports ' + place(address) + ': asking the service for the shop’s rates there (POST /api/express-checkout/shipping-rates) …');
    try {
      const { shipping_rates: rates } = await post('/api/express-checkout/shipping-rates', { token: config.token, address });
      if (rates.length === 0) {
        show('wallet-status', 'blocked', 'No shipping method of the shop serves ' + place(address) + ': the wallet refuses the address.');
        return event.reject();
      }
      const chosen = await post('/api/express-checkout/shipping-rate', { token: config.token, shipping_rate_id: rates[0].id, address });
      at = address;
      elements.update({ amount: chosen.total });
      event.resolve({ shippingRates: rates.map((rate) => ({ id: rate.id, displayName: rate.label, amount: rate.amount })), lineItems: chosen.line_items });
      show('wallet-status', 'ok', rates.length + ' rate(s) at ' + place(address) + ': ' + rates.map((rate) => rate.label + ' ' + money(rate.amount, start.currency)).join(', ') +
        '. ' + chosen.shipping_rate.label + ' written to the order (POST /api/express-checkout/shipping-rate): total ' + money(chosen.total, start.currency) + '.');
      loadOrder();
    } catch (error) {
      show('wallet-status', 'error', error.message);
      event.reject();
    }
  });
  wallet.on('shippingratechange', async (event) => {
    try {
      const chosen = await post('/api/express-checkout/shipping-rate', { token: config.token, shipping_rate_id: event.shippingRate.id, address: at });
      elements.update({ amount: chosen.total });
      event.resolve({ lineItems: chosen.line_items });
      show('wallet-status', 'ok', chosen.shipping_rate.label + ' chosen and written to the order: total ' + money(chosen.total, start.currency) + '.');
      loadOrder();
    } catch (error) {
      show('wallet-status', 'error', error.message);
      event.reject();
    }
  });
  wallet.on('confirm', async (event) => {
    await elements.submit();
    const billing = event.billingDetails;
    show('wallet-status', 'working', 'The customer authorized the wallet: the service writes its details and brings the intent to the order’s total (POST /api/payment-intent) …');
    let result;
    try {
      const intent = await post('/api/payment-intent', {
        token: config.token,
        billing_address: walletAddressOf(billing.name, billing.address, {}),
        shipping_address: walletAddressOf(event.shippingAddress.name, event.shippingAddress.address, {}),
        contact_info: { email: billing.email, phone: billing.phone },
      });
      result = await stripe.confirmPayment({ elements, clientSecret: intent.client_secret, redirect: 'if_required' });
    } catch (error) {
      show('wallet-status', 'error', error.message);
      return event.paymentFailed({ reason: 'fail' });
    }
    if (result.error) {
      show('wallet-status', 'declined', 'The wallet’s card was declined: ' + result.error.message);
      return event.paymentFailed({ reason: 'fail', message: result.error.message });
    }
    show('wallet-status', 'working', 'Stripe took ' + money(result.paymentIntent.amount, start.currency) + '. Waiting for the shop to record the payment …');
    const paid = await waitForOrder((current) => current.status !== 'pending', 20000);
    if (paid) show('wallet-status', 'ok', 'Paid with the wallet: ' + money(result.paymentIntent.amount, start.currency) + ', the order’s total; order #' + paid.id + ' is now ' + paid.status + '.');
    else show('wallet-status', 'error', 'Stripe took the payment, but the order is still pending: the webhook has not arrived (yet).');
  });
  wallet.mount('#wallet');
  $('express').hidden = false;
}

if (typeof Stripe === 'function' && config.order && config.order.status === 'pending' && config.token) startWallet(config.order);
`;

/** The checkout page's script: plain JavaScript, run as it is by the browser. */
const PAGE_SCRIPT = String.raw`
const $ = (id) => document.getElementById(id);
$('page-origin').textContent = location.origin;
$('service-url').textContent = config.serviceUrl;
$('token').value = config.token;
$('card-choice').hidden = !config.stripe;
$('back-office').hidden = !((config.shipping || config.cardLifecycle) && config.orderId && config.orderView);
$('shipping-actions').hidden = !config.shipping;
$('card-lifecycle').hidden = !config.cardLifecycle;

// A result line beside its buttons, scrolled into view when the buttons sit at the window's edge;
// while it works, it counts the seconds once past the first. It keeps the order status it was written
// under: once the order's status changes, the line is cleared (clearStale), never left saying "now processing".
const tickers = new Map();
function show(target, state, text) {
  const line = $(target);
  clearInterval(tickers.get(target));
  line.dataset.state = state;
  line.dataset.orderStatus = order ? order.status : '';
  line.textContent = text;
  line.scrollIntoView({ block: 'nearest' });
  if (state !== 'working') return;
  const started = Date.now();
  tickers.set(target, setInterval(() => {
    const seconds = Math.floor((Date.now() - started) / 1000);
    if (seconds >= 1) line.textContent = text + ' ' + seconds + ' s';
  }, 250));
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

function digitsOf(currency) {
  return new Intl.NumberFormat('en', { style: 'currency', currency }).resolvedOptions().maximumFractionDigits;
}

function money(minor, currency) {
  const digits = digitsOf(currency);
  return (minor / 10 ** digits).toFixed(digits) + ' ' + currency;
}

/** A decimal amount such as "45.00" in minor units, without floating point. */
function toMinor(amount, digits) {
  const [whole, fraction = ''] = String(amount).split('.');
  return Number(whole) * 10 ** digits + Number((fraction + '000').slice(0, digits) || 0);
}

function element(tag, text, className) {
  const node = document.createElement(tag);
  if (text !== undefined) node.textContent = text;
  if (className) node.className = className;
  return node;
}

// The shop's dates as WooCommerce gives them (2026-11-23T21:41:02, in its own zone: the *_gmt fields in
// UTC, the others in the site's zone, UTC on the demo shop), or Unix seconds (_date_paid), or ISO 8601
// with a zone (the history's): each shown in the shop's form, with its zone.
function shopDate(value) {
  if (value === null || value === undefined || value === '') return undefined;
  const text = String(value);
  const date = /^\d+$/.test(text) ? new Date(Number(text) * 1000) : new Date(/([zZ]|[+-]\d\d:?\d\d)$/.test(text) ? text : text + 'Z');
  if (Number.isNaN(date.getTime())) return undefined;
  return { text: date.toISOString().slice(0, 19).replace('T', ' ') + ' UTC', iso: date.toISOString() };
}

function timeElement(value) {
  const date = shopDate(value);
  const node = element('time', date ? date.text : String(value));
  if (date) node.dateTime = date.iso;
  return node;
}

const SHIPPABLE = ['processing', 'awaiting_shipment'];
const CLOSED_DISPUTE = ['won', 'lost', 'warning_closed', 'prevented'];

/** What each back-office action would do to the order as it is now: null when it applies, else why not. */
function whyNot(o) {
  const digits = digitsOf(o.currency);
  const remaining = toMinor(o.total, digits) - o.refunds.reduce((sum, refund) => sum + toMinor(refund.amount, digits), 0);
  const byCard = typeof o.meta._provider_payment_intent_id === 'string';
  const disputeOpen = typeof o.meta._dispute_id === 'string' && !CLOSED_DISPUTE.includes(o.meta._dispute_status);
  const notByCard = o.meta._manual_payment_status !== undefined
    ? 'Submitted for manual payment, not paid by card: Stripe holds nothing to '
    : 'Not paid by card yet: Stripe holds nothing to ';
  let ship = null;
  if (o.status === 'shipped') ship = 'Already shipped.';
  else if (!SHIPPABLE.includes(o.status)) ship = 'Only a paid order in processing is shipped; this one is ' + o.status + '.';
  let refund = null;
  if (!byCard) refund = notByCard + 'refund.';
  else if (o.meta._dispute_status === 'lost') refund = 'The dispute was lost: the bank already gave the money back.';
  else if (disputeOpen) refund = 'Disputed: Stripe refunds nothing while the dispute is open.';
  else if (remaining <= 0) refund = 'Fully refunded: nothing left to refund.';
  let dispute = null;
  if (!byCard) dispute = notByCard + 'dispute.';
  else if (typeof o.meta._dispute_id === 'string') dispute = 'Already disputed (' + o.meta._dispute_status + '): a payment is disputed once.';
  else if (remaining <= 0) dispute = 'Fully refunded: nothing left to dispute.';
  const outcome = disputeOpen ? null : 'No open dispute: its outcome comes after a Dispute.';
  const reviewOpen = typeof o.meta._review_id === 'string' && !o.meta._review_closed_reason;
  let review = null;
  if (!byCard) review = notByCard + 'review.';
  else if (reviewOpen) review = 'A review is open: approve it.';
  const approve = reviewOpen ? null : 'No open review: a Radar review comes first.';
  return { ship, refund, dispute, outcome, review, approve, remaining, digits };
}

let busy = false;
function applyRules() {
  if (!order) return;
  const rules = whyNot(order);
  const set = (buttons, why, hint) => {
    for (const id of buttons) {
      $(id).disabled = busy || why !== null;
      $(id).title = why || '';
    }
    $(hint).textContent = why || '';
  };
  set(['ship'], rules.ship, 'ship-why');
  set(['refund'], rules.refund, 'refund-why');
  $('refund-amount').disabled = busy || rules.refund !== null;
  if (rules.refund === null) $('refund-why').textContent = 'Up to ' + money(rules.remaining, order.currency) + '.';
  set(['dispute'], rules.dispute, 'dispute-why');
  set(['dispute-won', 'dispute-lost'], rules.outcome, 'dispute-outcome-why');
  set(['admin-refund'], rules.refund, 'admin-refund-why');
  set(['review'], rules.review, 'review-why');
  // One line of reasons for the pair: the review can be opened or approved, never both.
  $('review-approved').disabled = busy || rules.approve !== null;
  $('review-approved').title = rules.approve || '';
  if (rules.review === null) $('review-why').textContent = rules.approve || '';
}

function metaText(entry) {
  const value = typeof entry.value === 'string' ? entry.value : JSON.stringify(entry.value);
  // WooCommerce's internal paid date is Unix seconds: said in the shop's form too.
  const date = entry.key === '_date_paid' ? shopDate(entry.value) : undefined;
  return entry.key + ' = ' + value + (date ? ' (' + date.text + ')' : '');
}

/** A finished result line written under another status than the order's now says what is no longer so. */
function clearStale() {
  for (const target of ['status', 'office-status']) {
    const line = $(target);
    if (line.dataset.state === 'working' || !line.dataset.orderStatus || line.dataset.orderStatus === order.status) continue;
    line.dataset.state = 'idle';
    line.dataset.orderStatus = '';
    line.textContent = '';
  }
}

// The order as the shop holds it; every value is written with textContent.
let order;
function renderOrder() {
  clearStale();
  $('order').hidden = false;
  $('saved-cards').hidden = !(registered() && order.status === 'pending');
  $('order-id').textContent = '#' + order.id;
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

  const facts = [['Placed', [timeElement(order.date_created_gmt || order.date_created)]]];
  const paid = order.date_paid_gmt || order.date_paid;
  const paidHow = [order.payment_method_title, order.transaction_id ? 'transaction ' + order.transaction_id : ''].filter(Boolean).join(', ');
  facts.push(['Paid', paid ? [timeElement(paid), paidHow ? ' — ' + paidHow : ''] : ['not yet']]);
  const completed = order.date_completed_gmt || order.date_completed;
  if (completed) facts.push(['Completed', [timeElement(completed)]]);
  if (order.refunds.length) {
    const digits = digitsOf(order.currency);
    const refunded = order.refunds.reduce((sum, refund) => sum + toMinor(refund.amount, digits), 0);
    facts.push(['Refunded', [money(refunded, order.currency) + ' of ' + order.total + ' ' + order.currency]]);
  }
  // The card payment as Stripe holds it: with STRIPE_CAPTURE=on_shipment it is authorized at checkout
  // and captured when the parcel ships.
  const payment = order.payment;
  if (payment && payment.status === 'requires_capture') {
    facts.push(['Card', ['authorized ' + money(payment.amount_capturable, order.currency) + ', not captured yet: captured when the order ships']]);
  } else if (payment && payment.status === 'succeeded') {
    facts.push(['Card', ['captured ' + money(payment.amount_received, order.currency) + (payment.capture_method === 'manual' ? ' (authorized at checkout, captured on shipment)' : '')]]);
  } else if (payment && payment.status === 'canceled') {
    facts.push(['Card', ['authorization canceled: nothing was charged']]);
  }
  if (typeof order.meta._dispute_id === 'string') facts.push(['Dispute', [order.meta._dispute_id + ' (' + order.meta._dispute_status + ')']]);
  $('order-facts').replaceChildren(...facts.flatMap(([label, parts]) => {
    const value = element('dd');
    value.id = 'fact-' + label.toLowerCase();
    value.append(...parts);
    return [element('dt', label), value];
  }));

  $('history').hidden = false;
  const firstChange = order.history.find((write) => write.status);
  const placedStatus = element('span', firstChange ? firstChange.status.from : order.status, 'badge');
  placedStatus.dataset.status = placedStatus.textContent;
  const placed = element('li');
  placed.append(timeElement(order.date_created_gmt || order.date_created), element('span', 'Order placed: '), placedStatus);
  $('timeline').replaceChildren(placed, ...order.history.map((write) => {
    const item = element('li');
    item.append(timeElement(write.at));
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
      list.append(...write.meta.map((entry) => element('li', metaText(entry))));
      item.append(list);
    }
    return item;
  }));
  applyRules();
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
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  return undefined;
}

async function call(path, what, extra) {
  show('status', 'working', what + ' …');
  $('result').textContent = '';
  let response;
  try {
    response = await fetch(config.serviceUrl + path, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ ...checkoutBody(), ...extra }),
    });
  } catch (error) {
    show('status', 'blocked', 'Blocked by the browser: the checkout service did not allow this page’s origin (CORS), or did not answer.');
    return undefined;
  }
  const body = await response.json().catch(() => null);
  $('result').textContent = JSON.stringify(body, null, 2);
  if (!response.ok) {
    const message = body && (typeof body.error === 'string' ? body.error : body.error && body.error.message);
    show('status', 'error', 'HTTP ' + response.status + ': ' + (message || 'the checkout service refused the request'));
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
  return response.ok ? { paymentIntent: body } : { error: (body && body.error) || { message: 'The card was not accepted.' } };
}

const registered = () => Boolean(config.stripe && order && order.customer_id > 0);

/** The customer session's saved cards, as Stripe.js asks for the Payment Element (publishable key), listed first and chosen. */
async function listSavedCards(body) {
  if (!body.customer_session_client_secret) return [];
  const query = new URLSearchParams({ key: config.stripe.publishableKey, client_secret: body.client_secret, customer_session_client_secret: body.customer_session_client_secret });
  const response = await fetch(config.stripe.url + '/v1/elements/sessions?' + query);
  const session = response.ok ? await response.json() : null;
  const saved = (session && session.customer && session.customer.payment_methods) || [];
  document.querySelectorAll('input[name="card"][data-saved]').forEach((input) => input.parentElement.remove());
  for (const method of [...saved].reverse()) {
    const label = element('label', ' Saved ' + method.card.brand + ' •••• ' + method.card.last4);
    const input = document.createElement('input');
    Object.assign(input, { type: 'radio', name: 'card', value: method.id });
    input.dataset.saved = 'true';
    input.style.width = 'auto';
    label.prepend(input);
    $('card-choice').querySelector('legend').after(label);
  }
  if (saved.length > 0) document.querySelector('input[name="card"][data-saved]').checked = true;
  return saved;
}

$('show-saved').addEventListener('click', async () => {
  const body = await call('/api/payment-intent', 'Asking the checkout service for the customer’s saved cards (POST /api/payment-intent)');
  if (!body) return;
  const saved = await listSavedCards(body);
  show('status', 'ok', saved.length > 0
    ? saved.length + ' saved card(s) of customer #' + order.customer_id + ', listed first: pay with one.'
    : 'No saved card yet: tick “Save this card” when you pay.');
});

$('pay-card').addEventListener('click', async () => {
  const save = registered() && $('save-card').checked ? { save_payment_method: true } : {};
  const body = await call('/api/payment-intent', 'Asking the checkout service for a card payment (POST /api/payment-intent)', save);
  if (!body) return;
  if (!config.stripe) {
    show('status', 'ok', 'Card payment ready: payment intent ' + body.payment_intent_id +
      '. A real storefront now confirms the card with Stripe.js; in the demo run: npm run demo:pay -- ' + config.orderId);
    return;
  }
  const card = document.querySelector('input[name="card"]:checked').value;
  const failedBefore = order && order.meta._payment_failed_at;
  show('status', 'working', 'Confirming the card with Stripe (payment intent ' + body.payment_intent_id + ') …');
  let result;
  try {
    result = await confirmWithStripe(body.payment_intent_id, body.client_secret, card);
  } catch {
    show('status', 'error', 'Stripe did not answer: the card was not charged.');
    return;
  }
  if (result.paymentIntent && result.paymentIntent.status === 'succeeded') {
    show('status', 'working', 'Stripe accepted the card. Waiting for the shop to record the payment …');
    const paid = await waitForOrder((current) => current.status !== 'pending', 20000);
    if (paid) show('status', 'ok', 'Payment received: order #' + paid.id + ' is now ' + paid.status + '.');
    else show('status', 'error', 'Stripe took the payment, but the order is still pending: the webhook has not arrived (yet).');
    return;
  }
  const message = (result.error && result.error.message) || 'The card was not accepted.';
  show('status', 'working', 'Stripe declined the card: ' + message + ' Waiting for the shop to note it …');
  const noted = await waitForOrder((current) => current.meta._payment_failed_at && current.meta._payment_failed_at !== failedBefore, 20000);
  show('status', 'declined', 'Card declined: ' + message + (noted
    ? ' The order stays ' + noted.status + '. Note to the customer: “' + noted.customer_note + '”'
    : ' The shop has not noted the failure (yet).'));
});

$('submit-manual').addEventListener('click', async () => {
  const body = await call('/api/submit-order', 'Submitting the order for manual payment (POST /api/submit-order)');
  if (body) {
    show('status', 'ok', 'Order #' + body.order_id + ' submitted for manual payment: ' + money(body.total, body.currency) +
      '. Send the payment screenshot to the shop.');
    loadOrder();
  }
});

/** Runs a back-office action with every back-office button held until it is done. */
async function backOffice(action) {
  busy = true;
  applyRules();
  try {
    await action();
  } finally {
    busy = false;
    await loadOrder();
    // The order drawn again may have grown above the result: keep the result where the reader looks.
    if ($('office-status').textContent) $('office-status').scrollIntoView({ block: 'nearest' });
  }
}

/** A back-office button of this page's server: answers what the service's webhook answered, or why nothing happened. */
async function postAction(path, body, working) {
  show('office-status', 'working', working);
  let response;
  try {
    response = await fetch(path, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
  } catch {
    show('office-status', 'error', 'The storefront’s server did not answer.');
    return undefined;
  }
  const answer = await response.json().catch(() => null);
  if (!response.ok || !answer || !answer.delivery) {
    show('office-status', 'error', (answer && answer.message) || 'The action did not go through.');
    return undefined;
  }
  $('result').textContent = JSON.stringify(answer.delivery.body, null, 2);
  if (answer.delivery.status !== 200) {
    show('office-status', 'error', 'The checkout service refused the notification (HTTP ' + answer.delivery.status + '); the order is unchanged.');
    return undefined;
  }
  return answer;
}

const orderPath = (action) => '/demo/' + action + '/' + encodeURIComponent(config.orderId);

$('ship').addEventListener('click', () => backOffice(async () => {
  const answer = await postAction(orderPath('ship'), {}, 'ShipStation is notifying the service …');
  if (!answer) return;
  const shipped = await waitForOrder((current) => current.status === 'shipped', 5000);
  if (shipped) show('office-status', 'ok', 'Shipped: ' + shipped.customer_note);
  else show('office-status', 'error', 'The service took the notification but left the order ' + (order ? order.status : 'unchanged') + '.');
}));

$('refund').addEventListener('click', () => backOffice(async () => {
  const amount = $('refund-amount').value.trim();
  const rules = whyNot(order);
  if (amount && !/^\d+(\.\d+)?$/.test(amount)) {
    show('office-status', 'error', 'Type an amount such as 10.00, or leave it empty to refund all that remains.');
    return;
  }
  if (amount && toMinor(amount, rules.digits) > rules.remaining) {
    show('office-status', 'error', 'At most ' + money(rules.remaining, order.currency) + ' remains to refund.');
    return;
  }
  const refundsBefore = order.refunds.length;
  const answer = await postAction(orderPath('refund'), amount ? { amount } : {},
    'Stripe refunds ' + (amount ? amount + ' ' + order.currency : 'all that remains') + ' and tells the service …');
  if (!answer) return;
  const refunded = await waitForOrder((current) => current.refunds.length > refundsBefore, 5000);
  if (!refunded) {
    show('office-status', 'error', 'Stripe refunded the payment, but the service recorded no refund: its card events for refunds are off.');
    return;
  }
  $('refund-amount').value = '';
  const latest = refunded.refunds[refunded.refunds.length - 1];
  show('office-status', 'ok', 'Refund of ' + latest.amount + ' ' + refunded.currency + ' recorded: order #' + refunded.id + ' is now ' + refunded.status + '.');
}));

$('admin-refund').addEventListener('click', () => backOffice(async () => {
  const amount = $('refund-amount').value.trim();
  if (amount && !/^\d+(\.\d+)?$/.test(amount)) {
    show('office-status', 'error', 'Type an amount such as 10.00, or leave it empty to refund all that remains.');
    return;
  }
  const refundsBefore = order.refunds.length;
  const answer = await postAction(orderPath('admin-refund'), amount ? { amount } : {},
    'The shop owner refunds ' + (amount ? amount + ' ' + order.currency : 'all that remains') + ' in the WooCommerce admin; the plugin asks the service to refund at Stripe …');
  if (!answer) return;
  $('refund-amount').value = '';
  // The charge.refunded event that follows finds the refund WooCommerce holds and records no second one.
  const refunded = await waitForOrder((current) => current.refunds.length > refundsBefore, 5000);
  const latest = refunded ? refunded.refunds[refunded.refunds.length - 1] : { amount: answer.delivery.body.amount };
  show('office-status', 'ok', 'Refunded from the shop admin: ' + latest.amount + ' ' + order.currency + ', Stripe refund ' + answer.delivery.body.refund_id +
    ': order #' + order.id + ' is now ' + (refunded ? refunded.status : order.status) + '.');
}));

$('review').addEventListener('click', () => backOffice(async () => {
  const answer = await postAction(orderPath('review'), {}, 'Stripe Radar holds the payment for review and tells the service …');
  if (!answer) return;
  const held = await waitForOrder((current) => current.meta._review_id === answer.review_id, 5000);
  if (held) show('office-status', 'ok', 'Radar review ' + answer.review_id + ' opened: order #' + held.id + ' is now ' + held.status + '.');
  else show('office-status', 'error', 'Stripe opened the review, but the service did not record it: its card events for reviews are off.');
}));

$('review-approved').addEventListener('click', () => backOffice(async () => {
  const answer = await postAction(orderPath('review') + '/approved', {}, 'The shop approves the payment in the Stripe dashboard; Stripe tells the service …');
  if (!answer) return;
  const closed = await waitForOrder((current) => current.meta._review_closed_reason === 'approved', 5000);
  if (closed) show('office-status', 'ok', 'Radar review ' + answer.review_id + ' approved: order #' + closed.id + ' is now ' + closed.status + '.');
  else show('office-status', 'error', 'Stripe closed the review, but the service did not record it.');
}));

$('dispute').addEventListener('click', () => backOffice(async () => {
  const answer = await postAction(orderPath('dispute'), {}, 'The cardholder disputes the payment; Stripe tells the service …');
  if (!answer) return;
  const held = await waitForOrder((current) => current.meta._dispute_id === answer.dispute_id, 5000);
  if (held) show('office-status', 'ok', 'Dispute ' + answer.dispute_id + ' opened: order #' + held.id + ' is now ' + held.status + '.');
  else show('office-status', 'error', 'Stripe opened the dispute, but the service did not record it: its card events for disputes are off.');
}));

for (const outcome of ['won', 'lost']) {
  $('dispute-' + outcome).addEventListener('click', () => backOffice(async () => {
    const answer = await postAction(orderPath('dispute') + '/' + outcome, {}, 'Stripe closes the dispute (' + outcome + ') and tells the service …');
    if (!answer) return;
    const closed = await waitForOrder((current) => current.meta._dispute_status === outcome, 5000);
    if (closed) show('office-status', 'ok', 'Dispute ' + answer.dispute_id + ' ' + outcome + ': order #' + closed.id + ' is now ' + closed.status + '.');
    else show('office-status', 'error', 'Stripe closed the dispute, but the service did not record it.');
  }));
}

if (config.order) {
  order = config.order;
  renderOrder();
} else {
  loadOrder();
}
setInterval(() => { if (document.visibilityState === 'visible' && !busy) loadOrder(); }, 3000);
`;

const ORDER_PATH = /^\/demo\/(order|ship)\/([1-9]\d{0,8})$/;
const LIFECYCLE_PATH = /^\/demo\/(refund|dispute|admin-refund|review)\/([1-9]\d{0,8})(?:\/(won|lost|approved))?$/;
const AMOUNT = /^\d{1,9}(\.\d{1,3})?$/;
const ORDER_ID = /^[1-9]\d{0,8}$/;

/** A stand-in's refusal or silence, in the page's words: never its URL or its own message. */
function plainWords(error: unknown, demo: CardLifecycleDemo, what: string): { status: number; body: { message: string } } {
  if (error instanceof NoCardPaymentError || error instanceof NoOpenDisputeError || error instanceof NoOpenReviewError) return { status: 409, body: { message: error.message } };
  if (error instanceof ShopRefundRefusedError) return { status: 409, body: { message: `The shop refused the refund: ${error.message}` } };
  if (error instanceof MoneyError) return { status: 400, body: { message: 'The amount is not an amount in the order’s currency.' } };
  if (!(error instanceof DemoCallError)) return { status: 502, body: { message: `The ${what} did not go through.` } };
  const who = error.url.startsWith(demo.stripeUrl) ? 'Stripe' : error.url.startsWith(demo.woocommerceUrl) ? 'The shop' : 'The checkout service';
  if (error.status === 0) return { status: 502, body: { message: `${who} did not answer: the ${what} did not go through.` } };
  const known: Record<string, string> = {
    amount_too_large: 'Stripe refused: the amount is more than what remains to refund on this payment.',
    charge_not_refundable: 'Stripe refused: this payment has no successful charge.',
    resource_missing: 'Stripe does not know this order’s payment.',
  };
  return { status: 409, body: { message: (error.code && known[error.code]) ?? `${who} refused the ${what}.` } };
}

/** The page's Refund and Dispute buttons, done on this server: the answer says what the service's webhook answered. */
async function cardLifecycleAction(
  demo: CardLifecycleDemo,
  action: { kind: 'refund' | 'dispute' | 'admin-refund' | 'review'; orderId: number; outcome?: 'won' | 'lost' | 'approved' },
  body: string,
  credentials: { consumerKey: string; consumerSecret: string },
): Promise<{ status: number; body: unknown }> {
  const what =
    action.kind === 'refund' || action.kind === 'admin-refund' ? 'refund' : action.kind === 'review' ? 'review' : action.outcome ? 'dispute’s outcome' : 'dispute';
  try {
    if (action.kind === 'review') {
      if (action.outcome === 'approved') {
        const approved = await approveRadarReview(demo, action.orderId);
        return { status: 200, body: { review_id: approved.reviewId, delivery: approved.delivery } };
      }
      if (action.outcome) return { status: 404, body: { message: 'No such action.' } };
      const opened = await openRadarReview(demo, action.orderId);
      return { status: 200, body: { review_id: opened.reviewId, delivery: opened.delivery } };
    }
    if (action.kind === 'refund' || action.kind === 'admin-refund') {
      let amount: unknown;
      try {
        amount = (JSON.parse(body || '{}') as { amount?: unknown }).amount;
      } catch {
        return { status: 400, body: { message: 'The request is not JSON.' } };
      }
      if (amount !== undefined && (typeof amount !== 'string' || !AMOUNT.test(amount))) {
        return { status: 400, body: { message: 'The amount is a decimal such as 10.00.' } };
      }
      if (action.kind === 'admin-refund') {
        const done = await refundFromShopAdmin({ ...demo, woocommerceCredentials: credentials, stripeSecretKey: DEMO_SECRETS.stripeSecretKey }, action.orderId, amount as string | undefined);
        return { status: 200, body: { refund_id: done.refundId, delivery: done.delivery, event: done.event } };
      }
      const done = await refundCardPayment(demo, action.orderId, amount as string | undefined);
      return { status: 200, body: { delivery: done.delivery } };
    }
    if (action.outcome === 'approved') return { status: 404, body: { message: 'No such action.' } };
    if (!action.outcome) {
      const opened = await openCardDispute(demo, action.orderId);
      return { status: 200, body: { dispute_id: opened.disputeId, delivery: opened.delivery } };
    }
    const disputeId = await openDisputeOf(demo, action.orderId);
    const delivery = await closeCardDispute(demo, disputeId, action.outcome);
    return { status: 200, body: { dispute_id: disputeId, delivery } };
  } catch (error) {
    return plainWords(error, demo, what);
  }
}

/**
 * The order's card payment as the Stripe stand-in holds it (status, capture method, what is capturable and
 * received): an authorized payment and its capture on shipment show from the intent itself. Undefined
 * when the order names no intent or Stripe does not answer: the page then shows the shop's facts only.
 */
async function cardPaymentState(stripeUrl: string, view: OrderView): Promise<unknown> {
  const meta = (view as unknown as { meta?: Record<string, unknown> }).meta ?? {};
  const intentId = meta._provider_payment_intent_id ?? meta._payment_intent_id;
  if (typeof intentId !== 'string' || !/^[A-Za-z0-9_]{1,255}$/.test(intentId)) return undefined;
  try {
    const answer = await fetch(`${stripeUrl.replace(/\/+$/, '')}/demo/payment_intents/${intentId}`);
    if (!answer.ok) return undefined;
    const intent = (await answer.json()) as Record<string, unknown>;
    return {
      status: intent.status,
      capture_method: intent.capture_method,
      amount_capturable: intent.amount_capturable,
      amount_received: intent.amount_received,
    };
  } catch {
    return undefined;
  }
}

/** The order from the WooCommerce stand-in's view (the whole view), undefined when the shop holds no such order. */
async function orderView(woocommerceUrl: string, id: string | number): Promise<OrderView | undefined> {
  const view = await fetch(`${woocommerceUrl.replace(/\/+$/, '')}/demo/orders/${id}`);
  if (view.status === 404) return undefined;
  if (!view.ok) throw new Error(`order view answered ${view.status}`);
  return (await view.json()) as OrderView;
}

function sendHtml(response: ServerResponse, status: number, html: string): void {
  response.writeHead(status, {
    'Content-Type': 'text/html; charset=utf-8',
    'Cache-Control': 'no-store',
    'Content-Length': Buffer.byteLength(html),
  });
  response.end(html);
}

export function storefrontHandler(options: StorefrontOptions) {
  const serviceUrl = options.serviceUrl.replace(/\/+$/, '');
  const lifecycle: CardLifecycleDemo | undefined =
    options.stripeWebhookSecret && options.stripe && options.woocommerceUrl
      ? { serviceUrl, stripeUrl: options.stripe.url, woocommerceUrl: options.woocommerceUrl, stripeWebhookSecret: options.stripeWebhookSecret }
      : undefined;

  /** The demo orders with their state in the shop: the seeded list, or every order the shop holds. */
  const listedOrders = async (): Promise<{ id: number; shows: string; view?: OrderView }[]> => {
    let views: OrderView[] = [];
    if (options.woocommerceUrl) {
      try {
        views = (await (await fetch(`${options.woocommerceUrl.replace(/\/+$/, '')}/demo/orders`)).json()) as OrderView[];
      } catch {
        views = [];
      }
    }
    const listed = options.demoOrders ?? views.map((view) => ({ id: view.id, shows: 'order' }));
    return listed.map(({ id, shows }) => {
      const view = views.find((v) => v.id === id);
      return view ? { id, shows, view } : { id, shows };
    });
  };

  return async (request: IncomingMessage, response: ServerResponse, url: URL, body: string): Promise<void> => {
    const action = LIFECYCLE_PATH.exec(url.pathname);
    if (action && request.method === 'POST' && lifecycle) {
      const [, kind, orderId, outcome] = action;
      const answer = await cardLifecycleAction(
        lifecycle,
        { kind: kind as 'refund' | 'dispute' | 'admin-refund' | 'review', orderId: Number(orderId), ...(outcome ? { outcome: outcome as 'won' | 'lost' | 'approved' } : {}) },
        body,
        options.woocommerceCredentials ?? { consumerKey: DEMO_SECRETS.consumerKey, consumerSecret: DEMO_SECRETS.consumerSecret },
      );
      sendJson(response, answer.status, answer.body);
      return;
    }
    const demo = ORDER_PATH.exec(url.pathname);
    if (demo && demo[1] === 'order' && request.method === 'GET' && options.woocommerceUrl) {
      // Server to server, as a storefront reads the shop: the page never talks to WooCommerce itself.
      try {
        const view = await fetch(`${options.woocommerceUrl.replace(/\/+$/, '')}/demo/orders/${demo[2]}`);
        const answer = view.ok ? ((await view.json()) as OrderView & { payment?: unknown }) : undefined;
        if (answer && options.stripe) answer.payment = await cardPaymentState(options.stripe.url, answer);
        sendJson(response, view.status, answer ?? { message: view.status === 404 ? 'No such order in the shop.' : 'The shop did not answer.' }, { 'Cache-Control': 'no-store' });
      } catch {
        sendJson(response, 502, { message: 'The shop did not answer.' }, { 'Cache-Control': 'no-store' });
      }
      return;
    }
    if (demo && demo[1] === 'ship' && request.method === 'POST' && options.shippingWebhookSecret) {
      try {
        const delivery = await deliverShipNotification(serviceUrl, shipNotification({ orderId: Number(demo[2]) }), options.shippingWebhookSecret);
        sendJson(response, 200, { delivery });
      } catch {
        sendJson(response, 502, { message: 'The checkout service did not answer: nothing was shipped.' });
      }
      return;
    }
    if (request.method === 'GET' && url.pathname === '/demo/stripe.js' && options.stripe) {
      const script = stripeJsStandIn(options.stripe.url);
      response.writeHead(200, { 'Content-Type': 'text/javascript; charset=utf-8', 'Content-Length': Buffer.byteLength(script), 'Cache-Control': 'no-store' });
      response.end(script);
      return;
    }
    if (request.method !== 'GET' || url.pathname !== '/') {
      response.writeHead(url.pathname === '/favicon.ico' ? 204 : 404).end();
      return;
    }

    const orderParam = url.searchParams.get('order');
    let token = url.searchParams.get('token') ?? '';
    if (orderParam === null && !token) {
      sendHtml(response, 200, ordersPage(await listedOrders()));
      return;
    }
    if (orderParam !== null && !ORDER_ID.test(orderParam)) {
      sendHtml(response, 200, ordersPage(await listedOrders(), `“${orderParam.slice(0, 40)}” is not an order number. Pick one of the demo orders.`));
      return;
    }
    let order: OrderView | undefined;
    if (orderParam !== null && options.woocommerceUrl) {
      let known = true;
      try {
        order = await orderView(options.woocommerceUrl, orderParam);
        known = order !== undefined;
      } catch {
        // The shop did not answer: the page asks again by itself.
      }
      if (!known) {
        // A page that answers the reader's question, not a failed load: a 404 document is logged as an error in the browser's console.
        sendHtml(response, 200, ordersPage(await listedOrders(), `Order #${orderParam} does not exist in the shop. Pick one of the demo orders.`));
        return;
      }
    }
    if (!token && orderParam !== null && options.tokenSecret) {
      token = await mintCheckoutToken(Number(orderParam), { secret: options.tokenSecret, ttl: '30m' });
    }
    sendHtml(
      response,
      200,
      checkoutPage({
        serviceUrl,
        token,
        orderId: orderParam ?? '',
        stripe: options.stripe ? { url: options.stripe.url.replace(/\/+$/, ''), publishableKey: options.stripe.publishableKey } : null,
        orderView: Boolean(options.woocommerceUrl),
        order: order ?? null,
        shipping: Boolean(options.shippingWebhookSecret),
        cardLifecycle: Boolean(lifecycle),
      }),
    );
  };
}

export function startStorefront(options: StorefrontOptions): Promise<RunningServer> {
  const handler = storefrontHandler(options);
  return options.preferredPort
    ? listenPreferring(handler, options.preferredPort, 'storefront')
    : listen(handler, options.port ?? 0, 'storefront');
}
