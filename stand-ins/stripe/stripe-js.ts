/**
 * A stand-in for Stripe.js (the script @stripe/stripe-js loads from js.stripe.com) that confirms at the
 * Stripe stand-in, so a storefront's own Elements code runs unchanged offline. Its Payment Element is a
 * choice of Stripe's test payment methods, after a customer session's saved cards; its Express Checkout Element plays a wallet whose sheet fires the
 * storefront's handlers in Stripe's order (click, shippingaddresschange with the partial address a wallet
 * reveals, shippingratechange, confirm). confirmPayment posts what Stripe.js posts and leaves for return_url
 * (or answers the intent with `redirect: 'if_required'`). Not part of the production bundle.
 */
import { TEST_PAYMENT_METHODS } from './model';

/** The wallet's saved addresses, the first shown when its sheet opens. */
export const WALLET_ADDRESSES = [
  {
    label: 'Toronto, Canada',
    name: 'Ada Lovelace',
    email: 'ada@example.com',
    phone: '+1 416 555 0100',
    address: { line1: '12 Analytical Row', line2: null, city: 'Toronto', state: 'ON', postal_code: 'M5V 2T6', country: 'CA' },
  },
  {
    label: 'New York, United States',
    name: 'Grace Hopper',
    email: 'grace@example.com',
    phone: '+1 212 555 0100',
    address: { line1: '1 Harbor Way', line2: 'Apt 4', city: 'New York', state: 'NY', postal_code: '10001', country: 'US' },
  },
  {
    label: 'Sydney, Australia',
    name: 'Ada Lovelace',
    email: 'ada@example.com',
    phone: '+61 2 5550 0100',
    address: { line1: '1 Macquarie St', line2: null, city: 'Sydney', state: 'NSW', postal_code: '2000', country: 'AU' },
  },
] as const;

/** The payment method a wallet hands Stripe in the stand-in (a card that succeeds). */
export const WALLET_PAYMENT_METHOD = 'pm_card_visa';

/** The script's text, for the Stripe stand-in at `stripeUrl`. */
export function stripeJsStandIn(stripeUrl: string): string {
  const config = JSON.stringify({
    api: stripeUrl.replace(/\/+$/, ''),
    methods: Object.keys(TEST_PAYMENT_METHODS),
    wallet: { addresses: WALLET_ADDRESSES, method: WALLET_PAYMENT_METHOD },
  }).replace(/</g, '\\u003c');
  return `(() => {
  const config = ${config};
  const intentIdOf = (clientSecret) => String(clientSecret).split('_secret_')[0];
  const el = (tag, attributes = {}, text) => {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, value);
    if (text !== undefined) node.textContent = text;
    return node;
  };
  function money(amount, currency) {
    if (!Number.isInteger(amount) || !currency) return String(amount);
    const format = new Intl.NumberFormat('en', { style: 'currency', currency: currency.toUpperCase() });
    return format.format(amount / 10 ** format.resolvedOptions().maximumFractionDigits);
  }
  // What a wallet reveals before the customer authorizes: no street, and in Canada and the UK only the postal code's first part.
  function partial(address) {
    const cut = ['CA', 'GB'].includes(address.country) ? address.postal_code.split(' ')[0] : address.postal_code;
    return { city: address.city, state: address.state, postal_code: cut, country: address.country };
  }
  /** Fires an event whose handler must resolve or reject it; no handler: accepted as it is. */
  function ask(listeners, name, payload) {
    const handlers = listeners[name] || [];
    if (handlers.length === 0) return Promise.resolve({ resolved: {} });
    return new Promise((settle) => {
      const event = { elementType: 'expressCheckout', ...payload, resolve: (details) => settle({ resolved: details || {} }), reject: () => settle({ rejected: true }) };
      handlers.forEach((handler) => handler(event));
    });
  }

  /** The wallet's button and sheet, driving the storefront's handlers as Stripe.js does. */
  function mountExpressCheckout(target, group, options, listeners) {
    const button = el('button', { type: 'button' }, 'Pay with wallet (Stripe.js stand-in)');
    // Inline styles: the sheet looks the same whatever the storefront's own CSS.
    const sheet = el('div', { role: 'dialog', 'aria-label': 'Wallet (Stripe.js stand-in)', style: 'border:1px solid #8c959f;border-radius:10px;padding:.6rem .9rem;margin:.5rem 0;max-width:26rem;background:#fff' });
    sheet.hidden = true;
    const addressChoice = el('select', { 'aria-label': 'Wallet shipping address' });
    config.wallet.addresses.forEach((entry, index) => addressChoice.append(new Option(entry.label, String(index))));
    const rateList = el('fieldset', { 'aria-label': 'Wallet shipping rates' });
    const lines = el('ul', { 'aria-label': 'Wallet lines' });
    const total = el('p', { 'aria-label': 'Wallet total', style: 'font-weight:600' });
    const problem = el('p', { role: 'alert' });
    const pay = el('button', { type: 'button' }, 'Pay in wallet');
    const cancel = el('button', { type: 'button' }, 'Cancel');
    sheet.append(el('label', {}, 'Ship to '), addressChoice, rateList, lines, total, problem, pay, cancel);
    target.append(button, sheet);

    let settings = { ...options };
    let rates = [];
    let chosen;
    let shippable = false;
    const busy = (on) => [addressChoice, pay, cancel, ...rateList.querySelectorAll('input')].forEach((control) => (control.disabled = on));
    function render() {
      rateList.replaceChildren(el('legend', {}, 'Shipping'));
      for (const rate of rates) {
        const radio = el('input', { type: 'radio', name: 'wallet-rate', value: rate.id, style: 'width:auto;margin-right:.4rem' });
        radio.checked = chosen && chosen.id === rate.id;
        radio.addEventListener('change', () => changeRate(rate));
        const label = el('label', { style: 'display:block' });
        label.append(radio, ' ' + rate.displayName + ' ' + money(rate.amount, group.currency));
        rateList.append(label);
      }
      lines.replaceChildren(...(settings.lineItems || []).map((line) => el('li', {}, line.name + ' ' + money(line.amount, group.currency))));
      total.textContent = 'Total ' + money(group.amount, group.currency);
      pay.disabled = settings.shippingAddressRequired ? !(shippable && chosen) : false;
    }
    async function changeAddress() {
      const entry = config.wallet.addresses[Number(addressChoice.value)];
      problem.textContent = '';
      busy(true);
      const answer = await ask(listeners, 'shippingaddresschange', { name: entry.name, address: partial(entry.address) });
      busy(false);
      shippable = !answer.rejected;
      if (answer.rejected) {
        rates = [];
        chosen = undefined;
        problem.textContent = 'The shop does not ship to this address.';
      } else {
        if (answer.resolved.shippingRates) rates = answer.resolved.shippingRates;
        if (answer.resolved.lineItems) settings.lineItems = answer.resolved.lineItems;
        chosen = rates[0];
      }
      render();
    }
    async function changeRate(rate) {
      problem.textContent = '';
      busy(true);
      const answer = await ask(listeners, 'shippingratechange', { shippingRate: rate });
      busy(false);
      if (answer.rejected) problem.textContent = 'This shipping rate is not available.';
      else {
        chosen = rate;
        if (answer.resolved.lineItems) settings.lineItems = answer.resolved.lineItems;
      }
      render();
    }
    button.addEventListener('click', async () => {
      const answer = await ask(listeners, 'click', { expressPaymentType: 'apple_pay' });
      if (answer.rejected) return;
      settings = { ...options, ...answer.resolved };
      if (settings.shippingAddressRequired && !(settings.shippingRates && settings.shippingRates.length)) {
        throw new Error('IntegrationError: shippingRates are required when shippingAddressRequired is true.');
      }
      rates = settings.shippingRates || [];
      chosen = rates[0];
      addressChoice.value = '0';
      addressChoice.hidden = !settings.shippingAddressRequired;
      sheet.hidden = false;
      group.sheet = { render, close: () => (sheet.hidden = true) };
      if (settings.shippingAddressRequired) await changeAddress();
      else render();
    });
    addressChoice.addEventListener('change', changeAddress);
    cancel.addEventListener('click', () => {
      sheet.hidden = true;
      (listeners.cancel || []).forEach((handler) => handler({ elementType: 'expressCheckout' }));
    });
    pay.addEventListener('click', () => {
      const entry = config.wallet.addresses[Number(addressChoice.value)];
      problem.textContent = '';
      busy(true);
      group.method = config.wallet.method;
      const event = {
        elementType: 'expressCheckout',
        expressPaymentType: 'apple_pay',
        billingDetails: { name: entry.name, email: entry.email, phone: entry.phone, address: entry.address },
        ...(settings.shippingAddressRequired ? { shippingAddress: { name: entry.name, address: entry.address }, shippingRate: chosen } : {}),
        paymentFailed: (payload = {}) => {
          busy(false);
          problem.textContent = payload.message || 'The payment failed.';
          render();
        },
      };
      (listeners.confirm || []).forEach((handler) => handler(event));
    });
    setTimeout(() => (listeners.ready || []).forEach((handler) => handler({ elementType: 'expressCheckout', availablePaymentMethods: { applePay: true, googlePay: true, link: false } })));
  }

  function Stripe(publishableKey) {
    let last;
    const unsupported = () => Promise.reject(new Error('not played by the Stripe.js stand-in'));
    return {
      _registerWrapper() {},
      registerAppInfo() {},
      createToken: unsupported,
      createPaymentMethod: unsupported,
      confirmCardPayment: unsupported,
      elements(options = {}) {
        const group = { clientSecret: options.clientSecret, customerSessionClientSecret: options.customerSessionClientSecret, amount: options.amount, currency: options.currency, method: config.methods[0] };
        last = group;
        return {
          _group: group,
          update(changes = {}) {
            if (changes.amount !== undefined) group.amount = changes.amount;
            if (changes.currency !== undefined) group.currency = changes.currency;
            if (group.sheet) group.sheet.render();
          },
          getElement() { return null; },
          submit: async () => ({}),
          create(type, elementOptions = {}) {
            const listeners = {};
            return {
              mount(node) {
                const target = typeof node === 'string' ? document.querySelector(node) : node;
                if (type === 'expressCheckout') return mountExpressCheckout(target, group, elementOptions, listeners);
                const select = document.createElement('select');
                select.setAttribute('aria-label', 'Test card (Stripe.js stand-in)');
                for (const method of config.methods) select.append(new Option(method, method));
                target.append(select);
                group.method = select.value;
                select.addEventListener('change', () => (group.method = select.value));
                const ready = () => (listeners.ready || []).forEach((cb) => cb({ elementType: type }));
                if (!group.customerSessionClientSecret || !group.clientSecret) return void setTimeout(ready);
                // A customer session: the customer's saved cards first, the newest selected, as Stripe's Payment Element shows them.
                const query = new URLSearchParams({ key: publishableKey, client_secret: group.clientSecret, customer_session_client_secret: group.customerSessionClientSecret });
                fetch(config.api + '/v1/elements/sessions?' + query)
                  .then((response) => (response.ok ? response.json() : null))
                  .then((session) => {
                    const saved = (session && session.customer && session.customer.payment_methods) || [];
                    for (const method of [...saved].reverse()) select.prepend(new Option('Saved ' + method.card.brand + ' •••• ' + method.card.last4, method.id));
                    if (saved.length > 0) select.value = saved[0].id;
                    group.method = select.value;
                  })
                  .catch(() => {})
                  .finally(ready);
              },
              on(event, cb) { (listeners[event] = listeners[event] || []).push(cb); },
              off(event, cb) { listeners[event] = (listeners[event] || []).filter((f) => f !== cb); },
              update(changes) { Object.assign(elementOptions, changes); },
              unmount() {},
              destroy() {},
            };
          },
        };
      },
      async confirmPayment({ elements, confirmParams = {}, clientSecret, redirect } = {}) {
        const group = (elements && elements._group) || last || {};
        const secret = clientSecret || group.clientSecret;
        const id = intentIdOf(secret);
        const response = await fetch(config.api + '/v1/payment_intents/' + encodeURIComponent(id) + '/confirm', {
          method: 'POST',
          headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({ payment_method: group.method || config.methods[0], key: publishableKey, client_secret: secret, return_url: confirmParams.return_url || '' }),
        });
        const body = await response.json().catch(() => null);
        if (!response.ok) return { error: (body && body.error) || { type: 'api_error', message: 'The payment could not be confirmed.' } };
        if (group.sheet) group.sheet.close();
        if (redirect === 'if_required') return { paymentIntent: body };
        const back = new URL(confirmParams.return_url);
        back.searchParams.set('payment_intent', body.id);
        back.searchParams.set('payment_intent_client_secret', secret);
        back.searchParams.set('redirect_status', body.status === 'succeeded' ? 'succeeded' : body.status === 'processing' ? 'processing' : 'failed');
        window.location.assign(back.toString());
        return new Promise(() => {});
      },
    };
  }
  window.Stripe = Stripe;
})();
`;
}
