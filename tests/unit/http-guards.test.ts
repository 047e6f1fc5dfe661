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

  it('falls back to X-Real-IP, then to one shared unknown bucket', () => {
    expect(clientIp(headers({ 'x-real-ip': '203.0.113.7' }), 1)).toBe('203.0.113.7');
    expect(clientIp(headers({}), 1)).toBe('unknown');
  });

  it('treats an IPv4-mapped IPv6 address as the IPv4 address', () => {
    expect(clientIp(headers({ 'x-forwarded-for': '::ffff:203.0.113.9' }), 1)).toBe('203.0.113.9');
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
