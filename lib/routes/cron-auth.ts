/**
 * Who may run the cron routes and see the deep health check: the caller that
 * presents `Authorization: Bearer <CRON_SECRET>`, which is what Vercel Cron
 * sends when CRON_SECRET is set in the project. Without CRON_SECRET the cron
 * routes refuse to run at all rather than run for anyone.
 *
 * An unset secret is answered like a wrong one (401): how the service is
 * configured is for its operator, who learns it from the warning logged here
 * and at start, not for whoever calls the route.
 */
import { UnauthorizedError } from '@/lib/errors';
import { log } from '@/lib/log';
import { secretMatches } from '@/lib/security/secret-match';

export const CRON_NOT_CONFIGURED = 'CRON_SECRET is not set: the cron routes refuse to run';

/** Whether the request carries the cron bearer token; compared in constant time whatever the guess's length. */
export function hasCronBearer(headers: Headers, secret: string | undefined): boolean {
  if (!secret) return false;
  const header = headers.get('authorization') ?? '';
  const match = /^Bearer\s+(.+)$/i.exec(header.trim());
  if (!match?.[1]) return false;
  return secretMatches(match[1], secret);
}

/** 401 when the request does not carry CRON_SECRET, or when it is unset (logged for the operator); nothing runs. */
export function assertCronAuthorized(headers: Headers, secret: string | undefined): void {
  if (!secret) {
    log.warn('cron.secret_unset', { message: CRON_NOT_CONFIGURED });
    throw new UnauthorizedError();
  }
  if (!hasCronBearer(headers, secret)) throw new UnauthorizedError();
}
