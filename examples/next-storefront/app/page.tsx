import { checkOut } from './actions';
import { listProducts } from '../lib/shop';

// Products and prices are read from the shop on every visit.
export const dynamic = 'force-dynamic';

export default async function ShopPage({ searchParams }: { searchParams: Promise<{ empty?: string }> }) {
  const [products, { empty }] = await Promise.all([listProducts(), searchParams]);
  return (
    <main>
      <h1>Shop</h1>
      <form action={checkOut}>
        <ul style={{ listStyle: 'none', padding: 0 }}>
          {products.map((product) => (
            <li key={product.id} style={{ display: 'flex', justifyContent: 'space-between', margin: '0.5rem 0' }}>
              <label htmlFor={`quantity_${product.id}`}>
                {product.name} — {product.price}
              </label>
              <input id={`quantity_${product.id}`} name={`quantity_${product.id}`} type="number" min={0} max={99} defaultValue={0} style={{ width: '4rem' }} />
            </li>
          ))}
        </ul>
        {empty && <p role="alert">Your cart is empty: choose a quantity.</p>}
        <button type="submit">Check out</button>
      </form>
    </main>
  );
}
