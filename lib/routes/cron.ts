/**
 * The cron route family (GET /api/cron/*) and the health check, authorised like them when it goes deep: the caller must
 * present `Authorization: Bearer <CRON_SECRET>` (what Vercel Cron sends). Without CRON_SECRET nothing runs, answered
 * like a wrong secret (401): the operator learns it from the log, not whoever calls.
 */
import { runBudget, type Budget } from '@/lib/cron/budget';
import { UnauthorizedError } from '@/lib/errors';
import { cronErrorResponse } from '@/lib/http/errors';
import { runRoute, type HandlerResult } from '@/lib/http/route';
import { log } from '@/lib/log';
import { secretMatches } from '@/lib/security/secret-match';
import { getServices, type Services } from '@/lib/services';

/** 401 unless the request carries CRON_SECRET, compared in constant time whatever the guess's length. */
function assertCronAuthorized(headers: Headers, secret: string | undefined): void {
  if (!secret) {
    log.warn('cron.secret_unset', { message: 'CRON_SECRET is not set: the cron routes refuse to run' });
    throw new UnauthorizedError();
  }
  const match = /^Bearer\s+(.+)$/i.exec((headers.get('authorization') ?? '').trim());
  if (!match?.[1] || !secretMatches(match[1], secret)) throw new UnauthorizedError();
}

/** A cron run lasts up to the function's maxDuration; each unit of work sets its own upstream deadline (lib/cron/budget.ts). */
export function cronRoute(route: string, maxDurationSeconds: number, run: (services: Services, budget: Budget) => Promise<unknown>) {
  return async function GET(request: Request): Promise<Response> {
    const budget = runBudget(maxDurationSeconds * 1000);
    const budgetMs = maxDurationSeconds * 1000;
    const options = { route, request, toErrorResponse: cronErrorResponse, upstreamBudgetMs: budgetMs, storeCaller: 'background' as const };
    return runRoute(options, async () => {
      const services = getServices();
      assertCronAuthorized(request.headers, services.config.cronSecret);
      return { body: await run(services, budget) };
    });
  };
}

/**
 * GET /api/health: `shallow` answers without an upstream call to anyone; with an Authorization header the caller must
 * hold CRON_SECRET (401 otherwise), and `deep` runs with the crons' store slots and error answers.
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
