/**
 * What the scripts and tests that start the built service as a process share
 * (the e2e setup and world, the bench): which environment variables are the
 * service's own, so a started server gets only the values it is given and
 * never the shell's, and whether the production build in .next is current.
 *
 * Not part of the production bundle.
 */
import type { ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** Every variable the service reads (lib/config.ts), plus the tracing and TLS ones Node and @vercel/otel read. */
export const SERVICE_VARIABLES =
  /^(NODE_ENV$|PORT$|LOG_LEVEL$|WOOCOMMERCE_|STRIPE_|CHECKOUT_TOKEN_|ALLOWED_ORIGINS$|TRUST_PROXY_HOPS$|CLIENT_IP_HEADER$|SHIPPING_|SHIPSTATION_|REDIS_|UPSTREAM_|CARD_PAYMENT_|CARD_LIFECYCLE_EVENTS$|MANUAL_PAYMENT_|CRON_SECRET$|RECONCILE_|OTEL_|NODE_EXTRA_CA_CERTS$)/;

/** The environment of this process without the service's variables. */
export function environmentWithoutServiceVariables(): Record<string, string | undefined> {
  return Object.fromEntries(Object.entries(process.env).filter(([key]) => !SERVICE_VARIABLES.test(key)));
}

/** What a production build is made from: a change to any of these makes .next stale. */
const BUILD_SOURCES = ['app', 'lib', 'instrumentation.ts', 'next.config.ts', 'package-lock.json', 'tsconfig.json'];

function newestChange(path: string): number {
  if (!existsSync(path)) return 0;
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  let newest = stat.mtimeMs;
  for (const entry of readdirSync(path)) newest = Math.max(newest, newestChange(join(path, entry)));
  return newest;
}

export const buildIdPath = (root: string) => join(root, '.next', 'BUILD_ID');

/** Whether .next holds a build newer than every source it is made from. */
export function buildIsCurrent(root: string): boolean {
  const buildId = buildIdPath(root);
  if (!existsSync(buildId)) return false;
  const built = statSync(buildId).mtimeMs;
  return BUILD_SOURCES.every((source) => newestChange(join(root, source)) <= built);
}

/**
 * Stops a child started in its own process group (`detached: true`) and everything it started:
 * SIGTERM to the group, SIGKILL 5 s later if it is still there. `exited` settles when it exits.
 */
export async function stopGroup(child: ChildProcess, exited: Promise<unknown>): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null || !child.pid) return;
  try {
    process.kill(-child.pid, 'SIGTERM');
  } catch {
    return; // already gone
  }
  const killer = setTimeout(() => {
    try {
      if (child.pid) process.kill(-child.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }, 5000);
  await exited;
  clearTimeout(killer);
}
