/**
 * GET /api/health — `{status: 'ok', version}` without an upstream call; with
 * `Authorization: Bearer <CRON_SECRET>` it also tries the store and the card
 * provider (and Redis when configured) and reports each as ok or failed with
 * its latency, answering 503 `status: 'degraded'` when one failed. A wrong
 * token is 401, and so is any token while CRON_SECRET is unset.
 */
import { assertCronAuthorized } from '@/lib/cron/auth';
import { deepHealth, shallowHealth } from '@/lib/cron/health';
import { cronErrorResponse } from '@/lib/http/errors';
import { runRoute } from '@/lib/http/route';
import { getServices } from '@/lib/services';

export const runtime = 'nodejs';
export const dynamic = 'force-dynamic';

export async function GET(request: Request): Promise<Response> {
  return runRoute({ route: '/api/health', request, toErrorResponse: cronErrorResponse, storeCaller: 'background' }, async () => {
    if (!request.headers.has('authorization')) return { body: shallowHealth() };
    const services = getServices();
    assertCronAuthorized(request.headers, services.config.cronSecret);
    const health = await deepHealth(services);
    return { status: health.status === 'ok' ? 200 : 503, body: health };
  });
}
