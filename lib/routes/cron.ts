/** The cron route family (GET /api/cron/*), and the health check, authorised like them when it goes deep. */
import { cronErrorResponse } from '@/lib/http/errors';
import { runRoute, type HandlerResult } from '@/lib/http/route';
import { RunBudget } from '@/lib/cron/budget';
import { assertCronAuthorized } from '@/lib/routes/cron-auth';
import { getServices, type Services } from '@/lib/services';

/**
 * The cron routes (GET, Vercel Cron's Bearer CRON_SECRET): 401 without it, or
 * when it is unset (lib/routes/cron-auth.ts). The run lasts up to the function's maxDuration (its budget
 * stops starting work before then), and each unit of work inside sets its own
 * upstream deadline (lib/cron/budget.ts).
 */
export function cronRoute(route: string, maxDurationSeconds: number, run: (services: Services, budget: RunBudget) => Promise<unknown>) {
  return async function GET(request: Request): Promise<Response> {
    const budget = new RunBudget(maxDurationSeconds * 1000);
    const options = { route, request, toErrorResponse: cronErrorResponse, upstreamBudgetMs: maxDurationSeconds * 1000, storeCaller: 'background' as const };
    return runRoute(options, async () => {
      const services = getServices();
      assertCronAuthorized(request.headers, services.config.cronSecret);
      return { body: await run(services, budget) };
    });
  };
}

/**
 * GET /api/health: `shallow` answers without an upstream call to anyone; with an
 * Authorization header the caller must hold CRON_SECRET (401 otherwise), and
 * `deep` runs with the crons' store slots and error answers.
 */
export function healthRoute(route: string, checks: { shallow: () => unknown; deep: (services: Services) => Promise<HandlerResult> }) {
  return async function GET(request: Request): Promise<Response> {
    return runRoute({ route, request, toErrorResponse: cronErrorResponse, storeCaller: 'background' }, async () => {
      if (!request.headers.has('authorization')) return { body: checks.shallow() };
      const services = getServices();
      assertCronAuthorized(request.headers, services.config.cronSecret);
      return checks.deep(services);
    });
  };
}
