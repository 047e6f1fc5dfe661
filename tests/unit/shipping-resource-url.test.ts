import { describe, expect, it } from 'vitest';
import { checkResourceUrl } from '@/lib/shipping/resource-url';

const BASE = 'https://ssapi.shipstation.com';

describe('which resource_url may be read', () => {
  it.each([
    'https://ssapi.shipstation.com/shipments?storeID=123456&batchId=12345678&includeShipmentItems=False',
    'https://SSAPI.ShipStation.com/shipments?batchId=1',
    'https://ssapi.shipstation.com:443/shipments?batchId=1',
    'https://ssapi.shipstation.com/shipments?batchId=1#fragment',
  ])('allows %s', (url) => {
    const check = checkResourceUrl(url, BASE);
    expect(check.allowed).toBe(true);
    if (check.allowed) {
      expect(check.url.origin).toBe(BASE);
      expect(check.url.hash).toBe('');
    }
  });

  it.each([
    ['https://attacker.example/shipments', 'foreign_origin'],
    ['https://ssapi.shipstation.com.attacker.example/shipments', 'foreign_origin'],
    ['https://attacker.example@ssapi.shipstation.com/shipments', 'credentials_in_url'],
    ['https://ssapi.shipstation.com@attacker.example/shipments', 'foreign_origin'],
    ['http://ssapi.shipstation.com/shipments', 'foreign_origin'],
    ['https://ssapi.shipstation.com:444/shipments', 'foreign_origin'],
    ['file:///etc/passwd', 'foreign_origin'],
    ['/shipments?batchId=1', 'malformed'],
    [`https://ssapi.shipstation.com/shipments?x=${'a'.repeat(3000)}`, 'malformed'],
  ])('refuses %s (%s)', (url, reason) => {
    expect(checkResourceUrl(url, BASE)).toMatchObject({ allowed: false, reason });
  });

  it('with a base path, only URLs under it', () => {
    const base = 'http://127.0.0.1:4010/shipstation';
    expect(checkResourceUrl('http://127.0.0.1:4010/shipstation/shipments?batchId=1', base).allowed).toBe(true);
    expect(checkResourceUrl('http://127.0.0.1:4010/other/shipments', base)).toMatchObject({ reason: 'outside_base_path' });
    expect(checkResourceUrl('http://127.0.0.1:4010/shipstation-admin/x', base)).toMatchObject({ reason: 'outside_base_path' });
    expect(checkResourceUrl('http://127.0.0.1:4010/shipstation/../admin', base)).toMatchObject({ reason: 'outside_base_path' });
  });

  it('reports the refused origin without path or query', () => {
    expect(checkResourceUrl('https://attacker.example/path?token=x', BASE)).toEqual({
      allowed: false,
      reason: 'foreign_origin',
      origin: 'https://attacker.example',
    });
  });
});
