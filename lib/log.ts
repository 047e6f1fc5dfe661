/**
 * Structured logging: one JSON line per event on stdout/stderr.
 *
 * Callers pass only identifiers and figures (route, status, order id, event id,
 * amounts). Never pass a request body, a token, an address, an email, a secret
 * or an upstream response body: nothing here can tell them apart from safe data.
 */
export type LogLevel = 'info' | 'warn' | 'error';
export type LogFields = Record<string, string | number | boolean | null | undefined>;

export interface Logger {
  info(event: string, fields?: LogFields): void;
  warn(event: string, fields?: LogFields): void;
  error(event: string, fields?: LogFields): void;
}

function write(level: LogLevel, event: string, fields: LogFields = {}): void {
  if (process.env.LOG_LEVEL === 'silent') return;
  const line = JSON.stringify({ time: new Date().toISOString(), level, event, ...fields });
  if (level === 'info') console.log(line);
  else if (level === 'warn') console.warn(line);
  else console.error(line);
}

export const log: Logger = {
  info: (event, fields) => write('info', event, fields),
  warn: (event, fields) => write('warn', event, fields),
  error: (event, fields) => write('error', event, fields),
};
