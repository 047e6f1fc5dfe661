/**
 * GET /api/cron/capture-authorizations — captures, or reports for the shop to
 * decide (AUTHORIZATION_EXPIRY_ACTION), every card authorization older than
 * AUTHORIZATION_EXPIRY_HOURS that is still uncaptured, before it lapses
 * (lib/cron/capture-authorizations.ts), and answers
 * `{action, ageHours, checked, captured, reported, failed, complete}`.
 *
 * Run by Vercel Cron every hour (vercel.json) with
 * `Authorization: Bearer <CRON_SECRET>`, like the other cron routes.
 */
import { captureAuthorizations } from '@/lib/cron/capture-authorizations';
import { cronRoute } from '@/lib/routes/families';

export const runtime = 'nodejs';
export const dynamic = 'force-dynamic';
// Read statically by Next.js: must be a literal. Equal to CRON_MAX_DURATION_SECONDS and to vercel.json.
export const maxDuration = 300;

export const GET = cronRoute('/api/cron/capture-authorizations', maxDuration, (services, budget) => captureAuthorizations(services, budget));
