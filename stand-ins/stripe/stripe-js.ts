/**
 * A stand-in for Stripe.js (the script @stripe/stripe-js loads from js.stripe.com) that confirms at the
 * Stripe stand-in: a browser test serves it in place of Stripe's, so a storefront's own Payment Element
 * code runs unchanged offline. Its Payment Element is a choice of Stripe's test payment methods;
 * confirmPayment posts what Stripe.js posts (publishable key, client secret, payment method) and, on
 * success, leaves for return_url with Stripe's query parameters. Not part of the production bundle.
 */
import { TEST_PAYMENT_METHODS } from './model';

/** The script's text, for the Stripe stand-in at `stripeUrl`. */
export function stripeJsStandIn(stripeUrl: string): string {
  const config = JSON.stringify({ api: stripeUrl.replace(/\/+$/, ''), methods: Object.keys(TEST_PAYMENT_METHODS) });
  return `(() => {
  const config = ${config};
  const intentIdOf = (clientSecret) => String(clientSecret).split('_secret_')[0];
  function Stripe(publishableKey) {
    let mounted = { clientSecret: undefined, method: () => config.methods[0] };
    const unsupported = () => Promise.reject(new Error('not played by the Stripe.js stand-in'));
    return {
      _registerWrapper() {},
      registerAppInfo() {},
      createToken: unsupported,
      createPaymentMethod: unsupported,
      confirmCardPayment: unsupported,
      elements(options = {}) {
        mounted.clientSecret = options.clientSecret;
        return {
          update() {},
          getElement() { return null; },
          submit: async () => ({}),
          create(type) {
            const listeners = {};
            return {
              mount(node) {
                const target = typeof node === 'string' ? document.querySelector(node) : node;
                const select = document.createElement('select');
                select.setAttribute('aria-label', 'Test card (Stripe.js stand-in)');
                for (const method of config.methods) select.append(new Option(method, method));
                target.append(select);
                mounted.method = () => select.value;
                setTimeout(() => (listeners.ready || []).forEach((cb) => cb({ elementType: type })));
              },
              on(event, cb) { (listeners[event] = listeners[event] || []).push(cb); },
              off(event, cb) { listeners[event] = (listeners[event] || []).filter((f) => f !== cb); },
              update() {},
              unmount() {},
              destroy() {},
            };
          },
        };
      },
      async confirmPayment({ confirmParams = {}, clientSecret, redirect } = {}) {
        const secret = clientSecret || mounted.clientSecret;
        const id = intentIdOf(secret);
        const response = await fetch(config.api + '/v1/payment_intents/' + encodeURIComponent(id) + '/confirm', {
          method: 'POST',
          headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({ payment_method: mounted.method(), key: publishableKey, client_secret: secret, return_url: confirmParams.return_url || '' }),
        });
        const body = await response.json().catch(() => null);
        if (!response.ok) return { error: (body && body.error) || { type: 'api_error', message: 'The payment could not be confirmed.' } };
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
