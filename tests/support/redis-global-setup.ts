/**
 * Global setup of the unit project (vitest.config.ts): says once, visibly,
 * whether the tests against a real Redis run, and against which server (host
 * and port only: the URL may carry a password).
 */
export const REDIS_SKIP_REASON =
  'REDIS_URL is not set, so the tests against a real Redis are skipped; run .ci/run, or start redis-server and set REDIS_URL=redis://127.0.0.1:<port>';

export default function setup(): void {
  const url = process.env.REDIS_URL;
  if (!url) {
    process.stdout.write(`\n[redis] ${REDIS_SKIP_REASON}\n\n`);
    return;
  }
  try {
    const { protocol, hostname, port } = new URL(url);
    process.stdout.write(`\n[redis] tests against a real Redis run on ${protocol}//${hostname}:${port || '6379'}\n\n`);
  } catch {
    process.stdout.write('\n[redis] REDIS_URL is not a URL: the Redis tests will fail\n\n');
  }
}
