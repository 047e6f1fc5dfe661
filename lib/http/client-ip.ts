/**
 * The client's IP address as a rate-limit key (docs/decisions.md#d5). With CLIENT_IP_HEADER only that
 * header counts: `next start` fills a missing X-Forwarded-For with the proxy's socket address.
 */
import { isIP } from 'node:net';

export const UNKNOWN_CLIENT = 'unknown';
export const FORWARDED_FOR_HEADER = 'x-forwarded-for';

/** A quoted, bracketed IPv6 address with zone id and port fits well within it. */
const MAX_ENTRY_LENGTH = 128;

export function clientIp(headers: Headers, trustProxyHops: number, header: string = FORWARDED_FOR_HEADER): string {
  const value = headers.get(header);
  if (!value) return UNKNOWN_CLIENT;
  // A single-value header that arrives as a list: the rightmost entry is the one nearest to us.
  const entry = entryFromRight(value, header === FORWARDED_FOR_HEADER ? trustProxyHops : 1);
  return entry === undefined ? UNKNOWN_CLIENT : (clientKey(entry) ?? UNKNOWN_CLIENT);
}

/**
 * Read from the end, at most `hops` × MAX_ENTRY_LENGTH characters: what a client put further left is
 * never read. Fewer entries than hops: the leftmost, the best we know.
 */
function entryFromRight(value: string, hops: number): string | undefined {
  const floor = Math.max(0, value.length - hops * MAX_ENTRY_LENGTH);
  let end = value.length;
  let found: string | undefined;
  let counted = 0;
  while (counted < hops && end > 0) {
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

export function clientKey(raw: string): string | undefined {
  const address = withoutPort(raw.trim().replace(/^"(.*)"$/, '$1'));
  if (address === undefined) return undefined;
  const family = isIP(address);
  if (family === 4) return address;
  if (family !== 6) return undefined;
  const groups = ipv6Groups(address);
  if (groups === undefined) return undefined;
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) {
    const [high, low] = [groups[6] ?? 0, groups[7] ?? 0];
    return `${high >> 8}.${high & 0xff}.${low >> 8}.${low & 0xff}`;
  }
  return `${groups.slice(0, 4).map((g) => g.toString(16)).join(':')}::/64`;
}

function withoutPort(value: string): string | undefined {
  if (value.startsWith('[')) return /^\[([^\]]+)\](?::\d{1,5})?$/.exec(value)?.[1];
  return /^(\d{1,3}(?:\.\d{1,3}){3}):\d{1,5}$/.exec(value)?.[1] ?? value;
}

/** The eight groups of an address isIP() accepted: the URL parser checks it and writes an IPv4 tail as two groups. */
function ipv6Groups(address: string): number[] | undefined {
  const url = `http://[${address.replace(/%.*$/, '')}]/`;
  if (!URL.canParse(url)) return undefined;
  const host = new URL(url).hostname.slice(1, -1);
  const [head = '', rest] = host.split('::');
  const hex = (part: string) => (part === '' ? [] : part.split(':').map((g) => parseInt(g, 16)));
  const [left, right] = [hex(head), hex(rest ?? '')];
  return [...left, ...new Array<number>(8 - left.length - right.length).fill(0), ...right];
}
