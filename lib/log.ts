/**
 * One JSON line per event, tagged with the request's id and route (lib/request-scope.ts).
 * Pass identifiers and figures only: nothing here can tell a body, token, address or secret from safe data.
 */
import { randomUUID } from 'node:crypto';
import { currentRequest } from '@/lib/request-scope';

export type LogLevel = 'info' | 'warn' | 'error';
export type LogFields = Record<string, string | number | boolean | null | undefined>;

export interface Logger {
  info(event: string, fields?: LogFields): void;
  warn(event: string, fields?: LogFields): void;
  error(event: string, fields?: LogFields): void;
}

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

function write(level: LogLevel, event: string, fields: LogFields = {}): void {
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
  if (level === 'info') console.log(line);
  else if (level === 'warn') console.warn(line);
  else console.error(line);
}

export const log: Logger = {
  info: (event, fields) => write('info', event, fields),
  warn: (event, fields) => write('warn', event, fields),
  error: (event, fields) => write('error', event, fields),
};
