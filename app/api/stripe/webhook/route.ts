/**
 * POST /api/stripe/webhook — the URL Stripe's dashboard and CLI are usually
 * pointed at; the same handler as /api/cardprovider/webhook (docs/decisions.md#d1).
 * Next.js reads segment config only from the route file itself, so it is
 * repeated here rather than re-exported.
 */
export { POST } from '@/app/api/cardprovider/webhook/route';

export const runtime = 'nodejs';
export const dynamic = 'force-dynamic';
