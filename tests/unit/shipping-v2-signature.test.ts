import { generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { JWKS_MAX_AGE_MS, ShipStationV2Keys, V2_SIGNATURE_HEADERS, verifyV2Signature } from '@/lib/shipping/signature-v2';
import type { send } from '@/lib/upstream/node-http';

/** The transport's answer (lib/upstream/node-http.ts `send`) for a status and a text body. */
const answer = (status: number, body: string) => ({ status, headers: { 'content-type': 'application/json' }, body: Buffer.from(body) });

function keyPair(kid: string): { kid: string; privateKey: KeyObject; jwk: object } {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return { kid, privateKey, jwk: { ...publicKey.export({ format: 'jwk' }), kid, kty: 'RSA' } };
}

/** A JWKS endpoint whose published keys the test sets, counting its reads. */
function jwksServer(published: { jwk: object }[]) {
  const server = { published, reads: 0 };
  const fetchJwks = (async () => {
    server.reads += 1;
    return answer(200, JSON.stringify({ keys: server.published.map((k) => k.jwk) }));
  }) as typeof send;
  return { server, fetchJwks };
}

function signed(key: { kid: string; privateKey: KeyObject }, body: string, timestamp: string): Headers {
  const signature = sign('RSA-SHA256', Buffer.from(`${timestamp}.${body}`), key.privateKey).toString('base64');
  return new Headers({ [V2_SIGNATURE_HEADERS.keyId]: key.kid, [V2_SIGNATURE_HEADERS.signature]: signature, [V2_SIGNATURE_HEADERS.timestamp]: timestamp });
}

const BODY = '{"resource_type":"FULFILLMENT_SHIPPED_V2"}';
const savedTz = process.env.TZ;

afterEach(() => {
  process.env.TZ = savedTz;
});

describe('ShipStation V2 signature', () => {
  it('reads a timestamp without a zone as UTC, so a host off UTC keeps the 5-minute window', async () => {
    process.env.TZ = 'America/New_York';
    const key = keyPair('k1');
    const { fetchJwks } = jwksServer([key]);
    const keys = new ShipStationV2Keys('https://keys.test/jwks', 1_000, { send: fetchJwks });
    const now = Date.parse('2026-11-26T12:00:00.000Z');

    const zoneless = await verifyV2Signature(signed(key, BODY, '2026-11-26T11:59:00.000'), BODY, keys, now);
    const zoned = await verifyV2Signature(signed(key, BODY, '2026-11-26T06:59:00-05:00'), BODY, keys, now);

    expect(zoneless).toEqual({ ok: true });
    expect(zoned).toEqual({ ok: true });
  });

  it('reads keys older than an hour again before use: a failed read keeps the last ones, a withdrawn key stops verifying', async () => {
    const old = keyPair('old');
    const { server, fetchJwks } = jwksServer([old]);
    let down = false;
    let clock = Date.parse('2026-11-26T12:00:00.000Z');
    const keys = new ShipStationV2Keys('https://keys.test/jwks', 1_000, {
      send: (async (...args: Parameters<typeof send>) =>
        down ? (server.reads++, answer(502, 'down')) : fetchJwks(...args)) as typeof send,
      now: () => clock,
    });
    const verifyAt = () => verifyV2Signature(signed(old, BODY, new Date(clock).toISOString()), BODY, keys, clock);

    expect(await verifyAt()).toEqual({ ok: true });
    clock += JWKS_MAX_AGE_MS - 1_000;
    expect(await verifyAt()).toEqual({ ok: true });
    expect(server.reads).toBe(1);

    down = true;
    clock += 2_000;
    expect(await verifyAt()).toEqual({ ok: true });
    expect(server.reads).toBe(2);

    down = false;
    server.published = [keyPair('new')];
    clock += JWKS_MAX_AGE_MS + 1;
    expect(await verifyAt()).toEqual({ ok: false, reason: 'unknown_key' });
    expect(server.reads).toBe(3);
  });
});
