/** The service is an API; its root page only says so. */
export default function Home() {
  return (
    <main style={{ fontFamily: 'system-ui, sans-serif', maxWidth: 640, margin: '3rem auto', lineHeight: 1.5 }}>
      <h1>Checkout payment service</h1>
      <p>
        This service has no pages. Storefronts call <code>POST /api/payment-intent</code> and{' '}
        <code>POST /api/submit-order</code>; Stripe and ShipStation post to their webhooks. See the README.
      </p>
    </main>
  );
}
