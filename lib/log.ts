/**
 * One JSON line per event, tagged with the request's id and route (lib/request-scope.ts).
 * Pass identifiers and figures only: nothing here can tell a body, token, address or secret from safe data.
 */
import { randomUUID } from 'node:crypto';
import { currentRequest } from '@/lib/request-scope';

export type LogFields = Record<string, string | number | boolean | null | undefined>;

/** What a use case learns along the way, written into the request's log line and span at the end. */
export interface RequestContext {
  orderId?: number;
  eventId?: string;
  eventType?: string;
  outcome?: string;
}

export const REQUEST_ID_HEADER = 'x-request-id';
/** Letters, digits and `._:-`, at most 128: a caller's id is kept only when it cannot forge or flood a log line. */
const SANE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** The caller's `x-request-id` when sane (so a proxy's or the storefront's id follows the request), else a fresh one. */
export function requestIdFrom(headers: Headers): string {
  const given = headers.get(REQUEST_ID_HEADER)?.trim();
  return given && SANE_REQUEST_ID.test(given) ? given : randomUUID();
}

function write(level: 'info' | 'warn' | 'error', event: string, fields: LogFields = {}): void {
  if (process.env.LOG_LEVEL === 'silent') return;
  const scope = currentRequest();
  const line = JSON.stringify({
    time: new Date().toISOString(),
    level,
    event,
    requestId: scope?.requestId,
    route: scope?.route,
    ...fields,
  });
  console[level === 'info' ? 'log' : level](line);
}

const at = (level: 'info' | 'warn' | 'error') => (event: string, fields?: LogFields) => write(level, event, fields);

export const log = { info: at('info'), warn: at('warn'), error: at('error') };

/** `write`, dropping the calls that come less than `ms` after the last one it let through (a log line at most every `ms`). */
export function atMostEvery<A extends unknown[]>(ms: number, write: (...args: A) => void, clock = Date.now): (...args: A) => void {
  let last = Number.NEGATIVE_INFINITY;
  return (...args) => {
    const now = clock();
    if (now - last < ms) return;
    last = now;
    write(...args);
  };
}
