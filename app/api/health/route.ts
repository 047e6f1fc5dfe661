/**
 * GET /api/health — `{status: 'ok', version}` without an upstream call; with
 * `Authorization: Bearer <CRON_SECRET>` it also tries the store and the card
 * provider (and Redis when configured) and reports each as ok or failed with
 * its latency, answering 503 `status: 'degraded'` when one failed. A wrong
 * token is 401, and so is any token while CRON_SECRET is unset.
 */
import { deepHealth, shallowHealth } from '@/lib/health/health';
import { healthRoute } from '@/lib/routes/families';

export const runtime = 'nodejs';
export const dynamic = 'force-dynamic';

export const GET = healthRoute('/api/health', {
  shallow: shallowHealth,
  deep: async (services) => {
    const health = await deepHealth(services);
    return { status: health.status === 'ok' ? 200 : 503, body: health };
  },
});
