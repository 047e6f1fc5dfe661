/**
 * ShipStation V2's webhook signature as its Webhook Validation guide describes it: RSA-SHA256 over
 * `<timestamp as received>.<raw body>`, with the JWKS key the headers name (docs/decisions.md#d40).
 */
import { createPublicKey, verify, type JsonWebKey, type KeyObject } from 'node:crypto';
import { z } from 'zod';
import { log } from '@/lib/log';
import { send } from '@/lib/upstream/node-http';

export const V2_SIGNATURE_HEADERS = {
  keyId: 'x-shipengine-rsa-sha256-key-id',
  signature: 'x-shipengine-rsa-sha256-signature',
  timestamp: 'x-shipengine-timestamp',
} as const;

export const V2_SIGNATURE_WINDOW_MS = 5 * 60_000;
/** An unknown key id fetches the JWKS again at most this often: a stream of forged key ids costs one fetch a minute. */
export const JWKS_REFETCH_INTERVAL_MS = 60_000;
/** Keys read longer ago are read again before use, so a key ShipStation withdrew stops verifying within the hour. */
export const JWKS_MAX_AGE_MS = 60 * 60_000;
const MAX_JWKS_BYTES = 64 * 1024;

export function carriesV2Signature(headers: Headers): boolean {
  return Object.values(V2_SIGNATURE_HEADERS).some((name) => headers.has(name));
}

export type V2Verdict =
  | { ok: true }
  /** `unsigned`: a header missing (404); the rest 400; `keys_unavailable`: the JWKS could not be read (503, ShipStation retries). */
  | { ok: false; reason: 'unsigned' | 'stale' | 'bad_timestamp' | 'unknown_key' | 'bad_signature' | 'keys_unavailable' };

export class ShipStationV2Keys {
  private keys = new Map<string, KeyObject>();
  private fetchedAt: number | undefined;
  private inFlight: Promise<boolean> | undefined;

  constructor(
    private readonly jwksUrl: string,
    private readonly timeoutMs: number,
    private readonly options: { send?: typeof send; now?: () => number } = {},
  ) {}

  private readonly now = () => (this.options.now ?? Date.now)();

  async keyFor(keyId: string): Promise<KeyObject | undefined | 'unavailable'> {
    const age = this.fetchedAt === undefined ? Infinity : this.now() - this.fetchedAt;
    const cached = this.keys.get(keyId);
    if (cached && age < JWKS_MAX_AGE_MS) return cached;
    if (cached) {
      // Old keys: read them again. A failed read keeps them, so the key ShipStation last published still verifies.
      await this.refreshOnce();
      return this.keys.get(keyId);
    }
    if (age >= JWKS_REFETCH_INTERVAL_MS || this.inFlight) {
      // The JWKS could not be read just now: the key may well be a new one, so not "unknown".
      if (!(await this.refreshOnce())) return 'unavailable';
    }
    return this.keys.get(keyId);
  }

  /** One read however many requests ask at once. */
  private refreshOnce(): Promise<boolean> {
    this.inFlight ??= this.refresh().finally(() => {
      this.inFlight = undefined;
    });
    return this.inFlight;
  }

  private async refresh(): Promise<boolean> {
    this.fetchedAt = this.now();
    const unavailable = (fields: { status: number } | { reason: string }) => {
      log.error('shipping.v2_keys_unavailable', fields);
      return false;
    };
    try {
      const request = { url: new URL(this.jwksUrl), method: 'GET', headers: { accept: 'application/json' }, timeoutMs: this.timeoutMs };
      const answer = await (this.options.send ?? send)({ ...request, maxBytes: MAX_JWKS_BYTES });
      // A redirect is refused like any answer outside 2xx.
      if (answer.status < 200 || answer.status >= 300) return unavailable({ status: answer.status });
      const keys = parseJwks(JSON.parse(answer.body.toString('utf8')) as unknown);
      if (!keys) return unavailable({ reason: 'not_a_jwks' });
      this.keys = keys;
      log.info('shipping.v2_keys_read', { keys: keys.size });
      return true;
    } catch (error) {
      return unavailable({ reason: error instanceof Error ? error.name : 'unknown' });
    }
  }
}

/** The RSA keys of a JWKS by key id; others (ShipStation also publishes an EC key) are skipped. */
function parseJwks(data: unknown): Map<string, KeyObject> | undefined {
  const jwks = z.object({ keys: z.array(z.unknown()) }).safeParse(data);
  if (!jwks.success) return undefined;
  const keys = new Map<string, KeyObject>();
  for (const jwk of jwks.data.keys) {
    const rsa = z.looseObject({ kid: z.string(), kty: z.literal('RSA') }).safeParse(jwk);
    if (!rsa.success) continue;
    try {
      keys.set(rsa.data.kid, createPublicKey({ key: rsa.data as JsonWebKey, format: 'jwk' }));
    } catch {
      // A key node cannot import signs nothing the service accepts.
    }
  }
  return keys;
}

export async function verifyV2Signature(
  headers: Headers,
  rawBody: string,
  keys: ShipStationV2Keys,
  now: number = Date.now(),
): Promise<V2Verdict> {
  const keyId = headers.get(V2_SIGNATURE_HEADERS.keyId);
  const signature = headers.get(V2_SIGNATURE_HEADERS.signature);
  const timestamp = headers.get(V2_SIGNATURE_HEADERS.timestamp);
  if (!keyId || !signature || !timestamp) return { ok: false, reason: 'unsigned' };
  // ISO 8601 with a date and a time: a bare number or date is not ShipStation's timestamp. One without a
  // zone is read as UTC (Date.parse would read local time and move the window on a host off UTC).
  const zoned = /(Z|[+-]\d{2}:?\d{2})$/i.test(timestamp) ? timestamp : `${timestamp}Z`;
  const signedAt = /^\d{4}-\d{2}-\d{2}T/.test(timestamp) ? Date.parse(zoned) : NaN;
  if (!Number.isFinite(signedAt)) return { ok: false, reason: 'bad_timestamp' };
  if (Math.abs(now - signedAt) > V2_SIGNATURE_WINDOW_MS) return { ok: false, reason: 'stale' };
  if (keyId.length > 200 || signature.length > 4096) return { ok: false, reason: 'bad_signature' };
  const key = await keys.keyFor(keyId);
  if (key === 'unavailable') return { ok: false, reason: 'keys_unavailable' };
  if (!key) return { ok: false, reason: 'unknown_key' };
  try {
    if (verify('RSA-SHA256', Buffer.from(`${timestamp}.${rawBody}`, 'utf8'), key, Buffer.from(signature, 'base64'))) return { ok: true };
  } catch {
    // A signature node cannot read verifies nothing.
  }
  return { ok: false, reason: 'bad_signature' };
}
