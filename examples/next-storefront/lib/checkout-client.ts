/**
 * The storefront's one checkout client. In your storefront, copy
 * client/dist/storefront-client.js (`npm run build:client`) or client/index.ts;
 * here it is imported from this repository so the example type-checks against
 * the service's own schemas.
 */
import { createCheckoutClient } from '../../../client/index';

export const checkout = createCheckoutClient({
  // The checkout service's origin; the storefront's own origin must be in its ALLOWED_ORIGINS.
  baseUrl: process.env.NEXT_PUBLIC_CHECKOUT_SERVICE_URL ?? 'http://localhost:3000',
});
