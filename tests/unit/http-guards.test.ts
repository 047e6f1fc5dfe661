import { describe, expect, it } from 'vitest';
import { InvalidOriginError, PayloadTooLargeError } from '@/lib/errors';
import { readBodyText } from '@/lib/http/body';
import { clientIp } from '@/lib/http/client-ip';
import { allowedOrigin, assertAllowedOrigin, preflightResponse, requestOrigin } from '@/lib/http/origin';

const allowed = ['https://shop.example.com', 'http://localhost:3001'];
const headers = (init: Record<string, string>) => new Headers(init);

describe('client IP', () => {
  it('takes the entry the trusted proxy appended, not what the client forged', () => {
    expect(clientIp(headers({ 'x-forwarded-for': '1.1.1.1, 2.2.2.2, 203.0.113.9' }), 1)).toBe('203.0.113.9');
    expect(clientIp(headers({ 'x-forwarded-for': '1.1.1.1, 2.2.2.2, 203.0.113.9' }), 2)).toBe('2.2.2.2');
    expect(clientIp(headers({ 'x-forwarded-for': '203.0.113.9' }), 3)).toBe('203.0.113.9');
  });

  it('reads only the configured single-value header, even when next start filled X-Forwarded-For', () => {
    // next start puts the socket address (the proxy's) into a missing X-Forwarded-For.
    const behindNginx = headers({ 'x-forwarded-for': '10.0.0.2', 'x-real-ip': '203.0.113.7' });
    expect(clientIp(behindNginx, 1, 'x-real-ip')).toBe('203.0.113.7');
    expect(clientIp(behindNginx, 1)).toBe('10.0.0.2');
    const cloudflare = headers({ 'x-forwarded-for': '198.51.100.1, 10.0.0.2', 'cf-connecting-ip': '2001:db8::5' });
    expect(clientIp(cloudflare, 1, 'cf-connecting-ip')).toBe('2001:db8:0:0::/64');
    // The configured header is missing: one shared bucket, never the forgeable X-Forwarded-For.
    expect(clientIp(headers({ 'x-forwarded-for': '198.51.100.1' }), 1, 'x-real-ip')).toBe('unknown');
    // A single-value header that arrives as a list: the rightmost entry, whatever the hop count.
    expect(clientIp(headers({ 'x-real-ip': '1.1.1.1, 203.0.113.7' }), 3, 'x-real-ip')).toBe('203.0.113.7');
  });

  it('puts requests without an address, or with garbage, into one shared unknown bucket', () => {
    expect(clientIp(headers({}), 1)).toBe('unknown');
    for (const value of ['not-an-ip', '999.1.1.1', '1.2.3', '::g', '[1.2.3.4]x', 'a'.repeat(3000), '<script>']) {
      expect(clientIp(headers({ 'x-forwarded-for': value }), 1), value).toBe('unknown');
    }
  });

  it('reads the trusted entries from the right however long the header is: no length moves a client to another key', () => {
    const forged = ['a'.repeat(2100), '9.9.9.9, '.repeat(5000), ','.repeat(100_000), `${'x'.repeat(64)},`.repeat(2000)];
    for (const left of forged) {
      expect(clientIp(headers({ 'x-forwarded-for': `${left}, 203.0.113.9` }), 1)).toBe('203.0.113.9');
      expect(clientIp(headers({ 'x-forwarded-for': `${left}, 203.0.113.9, 10.0.0.2` }), 2)).toBe('203.0.113.9');
      expect(clientIp(headers({ 'x-forwarded-for': `${left}, [2001:db8::7]:443 , 10.0.0.2, 10.0.0.3` }), 3)).toBe('2001:db8:0:0::/64');
    }
    // Empty entries between the trusted ones are skipped, as before.
    expect(clientIp(headers({ 'x-forwarded-for': `${'b'.repeat(5000)}, 203.0.113.9,, 10.0.0.2, ` }), 2)).toBe('203.0.113.9');
    // The entry the proxies name is garbage or too long to be an address: the shared bucket, whatever lies left of it.
    expect(clientIp(headers({ 'x-forwarded-for': `1.2.3.4, ${'c'.repeat(300)}` }), 1)).toBe('unknown');
    expect(clientIp(headers({ 'x-forwarded-for': `1.2.3.4, ${' '.repeat(300)}5.6.7.8` }), 1)).toBe('unknown');
    expect(clientIp(headers({ 'x-forwarded-for': `${','.repeat(100_000)}` }), 1)).toBe('unknown');
    expect(clientIp(headers({ 'x-forwarded-for': `1.2.3.4${','.repeat(100_000)}` }), 1)).toBe('unknown');
  });

  it('keys one client as one address whatever the port or spelling', () => {
    const key = (value: string) => clientIp(headers({ 'x-forwarded-for': value }), 1);
    expect(key('203.0.113.9:5678')).toBe('203.0.113.9');
    expect(key('::ffff:203.0.113.9')).toBe('203.0.113.9');
    expect(key('[::ffff:203.0.113.9]:443')).toBe('203.0.113.9');
    expect(key('::FFFF:CB00:7109')).toBe('203.0.113.9');
    expect(key('"203.0.113.9"')).toBe('203.0.113.9');
    const v6 = key('2001:db8::1');
    expect(v6).toBe('2001:db8:0:0::/64');
    for (const spelling of ['2001:0DB8:0000:0000:0000:0000:0000:0001', '[2001:db8::1]:443', '[2001:db8::1]', '2001:db8::1%eth0']) {
      expect(key(spelling), spelling).toBe(v6);
    }
  });

  it('keys IPv6 clients by their /64, since a host can rotate through it', () => {
    const key = (value: string) => clientIp(headers({ 'x-forwarded-for': value }), 1);
    expect(key('2001:db8:1:2:aaaa::1')).toBe(key('2001:db8:1:2:ffff:ffff:ffff:ffff'));
    expect(key('2001:db8:1:2::1')).not.toBe(key('2001:db8:1:3::1'));
    expect(key('::1')).toBe('0:0:0:0::/64');
  });
});

describe('origin', () => {
  it('uses Origin, else the origin of Referer', () => {
    expect(requestOrigin(headers({ origin: 'https://shop.example.com' }))).toBe('https://shop.example.com');
    expect(requestOrigin(headers({ referer: 'https://shop.example.com/checkout?x=1' }))).toBe('https://shop.example.com');
    expect(requestOrigin(headers({ referer: 'not a url' }))).toBeUndefined();
    expect(requestOrigin(headers({}))).toBeUndefined();
  });

  it('allows only exact origins: look-alikes, other schemes and ports are refused', () => {
    expect(allowedOrigin(headers({ origin: 'https://shop.example.com' }), allowed)).toBe('https://shop.example.com');
    for (const origin of [
      'https://shop.example.com.evil.test',
      'https://evilshop.example.com',
      'http://shop.example.com',
      'https://shop.example.com:8443',
      'http://localhost:3002',
      'null',
    ]) {
      expect(() => assertAllowedOrigin(headers({ origin }), allowed), origin).toThrow(InvalidOriginError);
    }
    expect(() => assertAllowedOrigin(headers({}), allowed)).toThrow(InvalidOriginError);
  });

  it('refuses Origin: null and never lets a Referer stand in for a present Origin header', () => {
    const referer = 'https://shop.example.com/checkout';
    expect(() => assertAllowedOrigin(headers({ origin: 'null', referer }), allowed)).toThrow(InvalidOriginError);
    expect(() => assertAllowedOrigin(headers({ origin: 'null' }), ['null', ...allowed])).toThrow(InvalidOriginError);
    expect(() => assertAllowedOrigin(headers({ origin: 'https://evil.test', referer }), allowed)).toThrow(InvalidOriginError);
    expect(() => assertAllowedOrigin(headers({ origin: '', referer }), allowed)).toThrow(InvalidOriginError);
    expect(preflightResponse(headers({ origin: 'null', referer }), allowed).status).toBe(403);
    expect(assertAllowedOrigin(headers({ referer }), allowed)).toBe('https://shop.example.com');
  });

  it('answers the preflight for allowed origins only', () => {
    const ok = preflightResponse(headers({ origin: 'http://localhost:3001' }), allowed);
    expect(ok.status).toBe(204);
    expect(ok.headers.get('access-control-allow-origin')).toBe('http://localhost:3001');
    expect(ok.headers.get('access-control-allow-methods')).toBe('POST, OPTIONS');
    expect(ok.headers.get('access-control-allow-headers')).toBe('Content-Type');
    expect(ok.headers.get('vary')).toBe('Origin');
    const refused = preflightResponse(headers({ origin: 'https://evil.test' }), allowed);
    expect(refused.status).toBe(403);
    expect(refused.headers.get('access-control-allow-origin')).toBeNull();
  });
});

describe('body limit', () => {
  it('reads a body under the limit', async () => {
    const request = new Request('http://x/', { method: 'POST', body: 'hello' });
    await expect(readBodyText(request, 10)).resolves.toBe('hello');
  });

  it('refuses a declared length over the limit without reading', async () => {
    const request = new Request('http://x/', { method: 'POST', body: 'x', headers: { 'content-length': '999999' } });
    await expect(readBodyText(request, 10)).rejects.toBeInstanceOf(PayloadTooLargeError);
    expect(request.bodyUsed).toBe(false);
  });

  it('stops reading a streamed body once it passes the limit', async () => {
    let pulled = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulled += 1;
        controller.enqueue(new Uint8Array(8));
        if (pulled > 100) controller.close();
      },
    });
    const request = new Request('http://x/', { method: 'POST', body: stream, duplex: 'half' } as RequestInit);
    await expect(readBodyText(request, 20)).rejects.toBeInstanceOf(PayloadTooLargeError);
    expect(pulled).toBeLessThan(10);
  });
});
