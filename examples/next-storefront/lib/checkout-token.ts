/**
 * Checkout tokens, minted here on the storefront's server and kept in an httpOnly cookie per order:
 * the browser sends the token to the checkout service, but it never chooses which order it is for.
 */
import 'server-only';
import { cookies } from 'next/headers';
import { mintCheckoutToken } from '@checkout-service/storefront-client/server';

const cookieName = (orderId: number) => `checkout_${orderId}`;
const TOKEN_LIFETIME_SECONDS = 2 * 60 * 60;

/** Mints the token of an order this server has just created, and remembers it for this browser. */
export async function startCheckout(orderId: number): Promise<void> {
  const token = await mintCheckoutToken(orderId, {
    secret: process.env.CHECKOUT_TOKEN_SECRET ?? '',
    ttl: TOKEN_LIFETIME_SECONDS,
    ...(process.env.CHECKOUT_TOKEN_ISSUER ? { issuer: process.env.CHECKOUT_TOKEN_ISSUER } : {}),
    ...(process.env.CHECKOUT_TOKEN_AUDIENCE ? { audience: process.env.CHECKOUT_TOKEN_AUDIENCE } : {}),
  });
  (await cookies()).set(cookieName(orderId), token, {
    httpOnly: true,
    sameSite: 'lax',
    secure: process.env.NODE_ENV === 'production',
    path: '/checkout',
    maxAge: TOKEN_LIFETIME_SECONDS,
  });
}

/** The token this browser holds for the order, or undefined: then the order is not this browser's to pay or see. */
export async function checkoutTokenFor(orderId: number): Promise<string | undefined> {
  return (await cookies()).get(cookieName(orderId))?.value;
}
