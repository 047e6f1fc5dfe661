/**
 * GET /api/cron/reconcile-shipments — reads ShipStation's shipments of the
 * last SHIPMENT_RECONCILE_WINDOW_HOURS and applies each through the shipping
 * webhook's own status gate (a shipment already on its order changes nothing),
 * so a shipment lost with the replay queue (Redis flushed or restarted empty)
 * still reaches its order. Answers `{checked, applied, skipped, queued, pages,
 * complete, resumed, stoppedFor?, windowHours}`; 503 when the ShipStation
 * credentials are not set.
 *
 * Run by Vercel Cron every hour (vercel.json) with
 * `Authorization: Bearer <CRON_SECRET>`: 401 without it, and 401 (with a
 * warning in the log) when CRON_SECRET is unset. Stops before maxDuration and resumes on the next run.
 */
import { reconcileShipments } from '@/lib/cron/reconcile-shipments';
import { cronRoute } from '@/lib/routes/families';

export const runtime = 'nodejs';
export const dynamic = 'force-dynamic';
// Read statically by Next.js: must be a literal. Equal to CRON_MAX_DURATION_SECONDS and to vercel.json (a test checks).
export const maxDuration = 300;

export const GET = cronRoute('/api/cron/reconcile-shipments', maxDuration, (services, budget) => reconcileShipments(services, budget));
