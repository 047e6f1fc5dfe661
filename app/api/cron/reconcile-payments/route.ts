/**
 * GET /api/cron/reconcile-payments — applies the card provider's payment
 * events of the last RECONCILE_WINDOW_HOURS that the webhook missed, through
 * the webhook's own code and exactly-once guard, and answers
 * `{checked, applied, skipped, failed: [{eventId, reason}], complete, resumed}`.
 *
 * Run by Vercel Cron every 15 minutes (vercel.json) with
 * `Authorization: Bearer <CRON_SECRET>`: 401 without it, and 401 (with a
 * warning in the log) when CRON_SECRET is unset. Stops before maxDuration and resumes on the next run.
 */
import { reconcilePayments } from '@/lib/cron/reconcile-payments';
import { cronRoute } from '@/lib/routes/families';

export const runtime = 'nodejs';
export const dynamic = 'force-dynamic';
// Read statically by Next.js: must be a literal. Equal to CRON_MAX_DURATION_SECONDS and to vercel.json (a test checks).
export const maxDuration = 300;

export const GET = cronRoute('/api/cron/reconcile-payments', maxDuration, (services, budget) => reconcilePayments(services, budget));
