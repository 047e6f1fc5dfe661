/**
 * Who may run the cron routes and see the deep health check: the caller that
 * presents `Authorization: Bearer <CRON_SECRET>`, which is what Vercel Cron
 * sends when CRON_SECRET is set in the project. Without CRON_SECRET the cron
 * routes refuse to run at all rather than run for anyone.
 */
import { ServiceNotConfiguredError, UnauthorizedError } from '@/lib/errors';
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

/** 503 when CRON_SECRET is unset, 401 when the request does not carry it; nothing runs in either case. */
export function assertCronAuthorized(headers: Headers, secret: string | undefined): void {
  if (!secret) throw new ServiceNotConfiguredError(CRON_NOT_CONFIGURED);
  if (!hasCronBearer(headers, secret)) throw new UnauthorizedError();
}
