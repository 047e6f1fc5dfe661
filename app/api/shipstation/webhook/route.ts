/**
 * POST /api/shipstation/webhook — the shipping webhook under ShipStation's own
 * name (docs/decisions.md#d1); same handler, same rate-limit counter as /api/shipping/webhook.
 */
export { POST } from '@/app/api/shipping/webhook/route';

// Segment config is read statically by Next.js and is not followed through re-exports.
export const runtime = 'nodejs';
export const dynamic = 'force-dynamic';
