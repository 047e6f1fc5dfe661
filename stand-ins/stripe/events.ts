/**
 * Stripe's Events API for the stand-ins: what a payment intent's succeeded or
 * failed payment records, and `GET /v1/events` with Stripe's filters and
 * paging, so payment reconciliation runs the real SDK against it.
 *
 * As Stripe documents it: newest first; `types[]` (up to 20) or `type`, not
 * both; `created` as an integer or with `gt`/`gte`/`lt`/`lte`; `limit` 1 to 100
 * (default 10); `starting_after` continues after an event of the previous page
 * (older ones), `ending_before` before one (newer ones); an unknown cursor is
 * 400 `resource_missing`. Not part of the production bundle.
 */
import { randomBytes } from 'node:crypto';
import { StripeApiError, type StripeIntent, type StripeObject } from './objects';

export interface StripeEvent {
  id: string;
  object: 'event';
  api_version: string;
  created: number;
  livemode: false;
  pending_webhooks: number;
  request: { id: null; idempotency_key: null };
  type: string;
  /** A payment intent, or a charge, refund or dispute for the lifecycle events (CARD_LIFECYCLE_EVENTS). */
  data: { object: StripeIntent | StripeObject };
}

const MAX_TYPES = 20;

function invalid(message: string, param: string): StripeApiError {
  return new StripeApiError(400, 'invalid_request_error', 'parameter_invalid', message, param);
}

function integerParam(value: string | null, param: string): number | undefined {
  if (value === null) return undefined;
  if (!/^\d+$/.test(value)) throw invalid(`Invalid integer: ${value}`, param);
  return Number(value);
}

export class StripeEventLog {
  /** In creation order; listing reverses it. */
  readonly events: StripeEvent[] = [];
  private sequence = 0;

  /** Records an event about the intent as it is now (a snapshot, as Stripe's event data is). */
  record(type: string, intent: StripeIntent | StripeObject, created = Math.floor(Date.now() / 1000)): StripeEvent {
    this.sequence += 1;
    const event: StripeEvent = {
      id: `evt_${this.sequence.toString().padStart(6, '0')}${randomBytes(6).toString('hex')}`,
      object: 'event',
      api_version: '2025-01-01',
      created,
      livemode: false,
      pending_webhooks: 1,
      request: { id: null, idempotency_key: null },
      type,
      data: { object: structuredClone(intent) },
    };
    this.events.push(event);
    return event;
  }

  /** `GET /v1/events` with the request's query string. */
  list(query: URLSearchParams): { status: number; body: unknown } {
    const types = [...query.entries()].filter(([key]) => /^types\[\d*\]$/.test(key)).map(([, value]) => value);
    const type = query.get('type');
    if (types.length > 0 && type !== null) throw invalid('You may pass either `type` or `types`, but not both.', 'types');
    if (types.length > MAX_TYPES) throw invalid(`You may pass at most ${MAX_TYPES} types.`, 'types');
    const limit = integerParam(query.get('limit'), 'limit') ?? 10;
    if (limit < 1 || limit > 100) throw invalid('Invalid limit: must be between 1 and 100', 'limit');
    const exactly = integerParam(query.get('created'), 'created');
    const gt = integerParam(query.get('created[gt]'), 'created[gt]');
    const gte = integerParam(query.get('created[gte]'), 'created[gte]');
    const lt = integerParam(query.get('created[lt]'), 'created[lt]');
    const lte = integerParam(query.get('created[lte]'), 'created[lte]');

    const matchesType = (event: StripeEvent) => {
      if (types.length > 0) return types.includes(event.type);
      if (type === null) return true;
      return type.endsWith('*') ? event.type.startsWith(type.slice(0, -1)) : event.type === type;
    };
    const matches = (event: StripeEvent) =>
      matchesType(event) &&
      (exactly === undefined || event.created === exactly) &&
      (gt === undefined || event.created > gt) &&
      (gte === undefined || event.created >= gte) &&
      (lt === undefined || event.created < lt) &&
      (lte === undefined || event.created <= lte);

    // Newest first; among events of the same second, the later recorded first.
    const newestFirst = this.events
      .map((event, index) => ({ event, index }))
      .sort((a, b) => b.event.created - a.event.created || b.index - a.index)
      .map(({ event }) => event);
    let candidates = newestFirst;
    const startingAfter = query.get('starting_after');
    const endingBefore = query.get('ending_before');
    if (startingAfter !== null || endingBefore !== null) {
      const cursor = (startingAfter ?? endingBefore) as string;
      const at = newestFirst.findIndex((event) => event.id === cursor);
      if (at < 0) {
        throw new StripeApiError(400, 'invalid_request_error', 'resource_missing', `No such event: '${cursor}'`, startingAfter ? 'starting_after' : 'ending_before');
      }
      candidates = startingAfter !== null ? newestFirst.slice(at + 1) : newestFirst.slice(0, at);
    }
    const selected = candidates.filter(matches);
    // ending_before pages towards newer events: the page is the `limit` events just before the cursor.
    const page = endingBefore !== null && startingAfter === null ? selected.slice(-limit) : selected.slice(0, limit);
    return {
      status: 200,
      body: { object: 'list', url: '/v1/events', has_more: selected.length > page.length, data: structuredClone(page) },
    };
  }
}
