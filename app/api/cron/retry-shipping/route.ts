/**
 * GET /api/cron/retry-shipping — replays the shipping updates the store could
 * not take when the webhook delivered them, through the webhook's own status
 * gate, and answers `{checked, applied, skipped, retrying, parkedNow, parked,
 * parkedTotal, waiting, complete}`. An entry that failed ten times is parked:
 * kept, reported here and logged at error level.
 *
 * Run by Vercel Cron every 5 minutes (vercel.json) with
 * `Authorization: Bearer <CRON_SECRET>`: 401 without it, and 401 (with a
 * warning in the log) when CRON_SECRET is unset. Stops before maxDuration; the rest waits for the next run.
 */
import { replayShipping } from '@/lib/cron/retry-shipping';
import { cronRoute } from '@/lib/routes/families';

export const runtime = 'nodejs';
export const dynamic = 'force-dynamic';
// Read statically by Next.js: must be a literal. Equal to CRON_MAX_DURATION_SECONDS and to vercel.json (a test checks).
export const maxDuration = 300;

export const GET = cronRoute('/api/cron/retry-shipping', maxDuration, (services, budget) => replayShipping(services, budget));
