/**
 * The client's IP address (docs/decisions.md#d5), used only as a rate-limit key.
 *
 * By default the address comes from X-Forwarded-For: each trusted proxy
 * appends the address it received the request from, so the entry `hops`
 * places from the right is the one our outermost trusted proxy saw. Entries
 * further left are whatever the client sent and are never trusted: forging
 * them gets no fresh counter.
 *
 * An edge that sets a single-value header instead (X-Real-IP, CF-Connecting-IP,
 * …) is named with CLIENT_IP_HEADER, and then only that header counts: a
 * `next start` fills a missing X-Forwarded-For with the socket address (the
 * proxy's), which must not shadow the edge's header.
 *
 * One client is one key: ports are stripped, IPv4-mapped IPv6 is the IPv4
 * address, IPv6 is canonical and keyed by its /64 (one host can rotate through
 * its /64 at will). A value that is no IP address at all falls into the one
 * shared `unknown` bucket, so sending garbage never earns a fresh counter.
 */
import { isIP } from 'node:net';

export const UNKNOWN_CLIENT = 'unknown';
export const FORWARDED_FOR_HEADER = 'x-forwarded-for';

/**
 * The longest entry worth reading: a bracketed IPv6 address with a zone id and
 * a port, quoted, with the spaces a proxy puts around it, fits well within it.
 * Longer is no address a proxy wrote.
 */
const MAX_ENTRY_LENGTH = 128;

export function clientIp(headers: Headers, trustProxyHops: number, header: string = FORWARDED_FOR_HEADER): string {
  const value = headers.get(header);
  if (!value) return UNKNOWN_CLIENT;
  // A single-value header that arrives as a list: the rightmost entry is the one nearest to us.
  const hops = header === FORWARDED_FOR_HEADER ? trustProxyHops : 1;
  const entry = entryFromRight(value, hops);
  return entry === undefined ? UNKNOWN_CLIENT : (clientKey(entry) ?? UNKNOWN_CLIENT);
}

/**
 * The entry `hops` places from the right of a comma-separated list (empty
 * entries skipped), read from the end: the trusted proxies' entries are the
 * rightmost, so whatever a client put to their left, however long, is never
 * read and cannot move the client to another key. The work is capped instead
 * of the header: at most `hops` × MAX_ENTRY_LENGTH characters are looked at,
 * and an entry that does not end within them is no address (undefined).
 * Fewer entries than hops: the leftmost, the best we know.
 */
function entryFromRight(value: string, hops: number): string | undefined {
  const floor = Math.max(0, value.length - hops * MAX_ENTRY_LENGTH);
  let end = value.length;
  let found: string | undefined;
  let counted = 0;
  while (counted < hops && end > 0) {
    // The comma before `end`, looked for only within the budget: lastIndexOf on the whole header would scan it all.
    const window = value.slice(Math.max(floor, end - MAX_ENTRY_LENGTH - 1), end);
    const comma = window.lastIndexOf(',');
    const start = comma < 0 ? end - window.length : end - window.length + comma + 1;
    if (comma < 0 && start > 0) return undefined;
    const entry = value.slice(start, end).trim();
    if (entry !== '') {
      found = entry;
      counted += 1;
    }
    end = start - 1;
  }
  return found;
}

/**
 * The rate-limit key of one address as a proxy wrote it, or undefined when it
 * is no IP address: `1.2.3.4:5678` → `1.2.3.4`, `[2001:DB8::1]:443` →
 * `2001:db8:0:0::/64`, `::ffff:1.2.3.4` → `1.2.3.4`.
 */
export function clientKey(raw: string): string | undefined {
  const address = withoutPort(raw.trim().replace(/^"(.*)"$/, '$1'));
  if (address === undefined) return undefined;
  const family = isIP(address);
  if (family === 4) return address;
  if (family !== 6) return undefined;
  const groups = ipv6Groups(address);
  if (groups === undefined) return undefined;
  if (isIpv4Mapped(groups)) {
    const [high, low] = [groups[6] ?? 0, groups[7] ?? 0];
    return `${high >> 8}.${high & 0xff}.${low >> 8}.${low & 0xff}`;
  }
  return `${groups.slice(0, 4).map((g) => g.toString(16)).join(':')}::/64`;
}

/** The address without a port: `1.2.3.4:80` and `[v6]:443` lose it; a bare IPv6 address is left whole. */
function withoutPort(value: string): string | undefined {
  const bracketed = /^\[([^\]]+)\](?::\d{1,5})?$/.exec(value);
  if (bracketed) return bracketed[1];
  if (value.startsWith('[')) return undefined;
  const v4WithPort = /^(\d{1,3}(?:\.\d{1,3}){3}):\d{1,5}$/.exec(value);
  if (v4WithPort) return v4WithPort[1];
  return value;
}

/** The eight 16-bit groups of a valid IPv6 address (zone id dropped, embedded IPv4 read). */
function ipv6Groups(address: string): number[] | undefined {
  let text = address.toLowerCase();
  const zone = text.indexOf('%');
  if (zone >= 0) text = text.slice(0, zone);
  const tail: number[] = [];
  const v4 = /(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(text);
  if (v4) {
    const [a, b, c, d] = v4.slice(1).map(Number) as [number, number, number, number];
    tail.push((a << 8) | b, (c << 8) | d);
    text = text.slice(0, v4.index);
    if (text.endsWith(':') && !text.endsWith('::')) text = text.slice(0, -1);
  }
  const [head, rest] = text.split('::') as [string, string | undefined];
  const hex = (part: string) => (part === '' ? [] : part.split(':').map((g) => parseInt(g, 16)));
  const left = hex(head);
  const right = [...hex(rest ?? ''), ...tail];
  const fill = rest === undefined ? 0 : 8 - left.length - right.length;
  const groups = [...left, ...new Array<number>(Math.max(0, fill)).fill(0), ...right];
  return groups.length === 8 && groups.every((g) => Number.isInteger(g) && g >= 0 && g <= 0xffff) ? groups : undefined;
}

/** ::ffff:a.b.c.d, the way a dual-stack socket reports an IPv4 client. */
function isIpv4Mapped(groups: number[]): boolean {
  return groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff;
}
