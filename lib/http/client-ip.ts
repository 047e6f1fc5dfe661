/**
 * The client's IP address (DECISIONS 5), used only as a rate-limit key.
 *
 * Each trusted proxy appends the address it received the request from to
 * X-Forwarded-For, so the entry `hops` places from the right is the one our
 * outermost trusted proxy saw. Entries further left are whatever the client
 * sent and are never trusted: forging them gets no fresh counter.
 */
export const UNKNOWN_CLIENT = 'unknown';

export function clientIp(headers: Headers, trustProxyHops: number): string {
  const forwarded = headers.get('x-forwarded-for');
  if (forwarded) {
    const entries = forwarded
      .split(',')
      .map((entry) => entry.trim())
      .filter(Boolean);
    // Fewer entries than trusted hops: the leftmost is still the best we know.
    const entry = entries[Math.max(0, entries.length - trustProxyHops)];
    if (entry) return normalizeIp(entry);
  }
  const realIp = headers.get('x-real-ip')?.trim();
  if (realIp) return normalizeIp(realIp);
  return UNKNOWN_CLIENT;
}

/** Bounded and canonical, so one address is one key: "::ffff:1.2.3.4" and "1.2.3.4" are the same client. */
function normalizeIp(raw: string): string {
  const ip = raw.slice(0, 64).toLowerCase();
  return ip.startsWith('::ffff:') && ip.includes('.') ? ip.slice('::ffff:'.length) : ip;
}
