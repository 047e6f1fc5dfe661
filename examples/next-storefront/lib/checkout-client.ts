import { createCheckoutClient } from '@checkout-service/storefront-client';

/** The storefront's one client of the checkout service; this site's origin must be in the service's ALLOWED_ORIGINS. */
export const checkout = createCheckoutClient({
  baseUrl: process.env.NEXT_PUBLIC_CHECKOUT_SERVICE_URL ?? 'http://localhost:3000',
});
