/**
 * /checkout?token=… — the storefront's payment page. The token comes from the
 * storefront's server (the service's `mintCheckoutToken`, or `npm run token`
 * while developing); the addresses would come from the storefront's own form.
 */
import { PaymentForm } from './payment-form';

export default async function CheckoutPage({ searchParams }: { searchParams: Promise<{ token?: string }> }) {
  const { token } = await searchParams;
  if (!token) return <p>Missing checkout token.</p>;
  return (
    <main>
      <h1>Payment</h1>
      <PaymentForm
        token={token}
        billing={{ first_name: 'Ada', last_name: 'Lovelace', address_1: '12 Analytical Row', city: 'London', postcode: 'N1 7AA', country: 'GB' }}
        contact={{ email: 'ada@example.com', phone: '+44 20 7946 0000' }}
      />
    </main>
  );
}
