import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ERROR_KINDS, ServiceError, type ErrorKind } from '@/lib/errors';
import { cardWebhookErrorResponse, checkoutErrorResponse, cronErrorResponse, shippingWebhookErrorResponse } from '@/lib/http/errors';

class AnyKind extends ServiceError {
  constructor(readonly kind: ErrorKind) {
    super(`failure of kind ${kind}`);
  }
}

// A kind outside the closed list does not compile (tsc checks the tests too).
class UnknownKind extends ServiceError {
  // @ts-expect-error 'made_up' is not an ErrorKind
  readonly kind = 'made_up';
}
void UnknownKind;

const profile = { code: 'PAYMENT_INTENT_ERROR', notPayableMessage: 'Order cannot be paid' } as const;

/**
 * What the caller did: never answered as the service's own 5xx. (An order that cannot be paid is
 * the 400 of OrderNotPayableError, whose fields the answer carries; the route tests cover it.)
 */
const NOT_SERVICE_FAULTS: readonly ErrorKind[] = ['rate_limited', 'invalid_request', 'payload_too_large', 'request_aborted'];

describe('error kinds', () => {
  it('every kind gets an answer from every endpoint family', () => {
    for (const kind of ERROR_KINDS) {
      const error = new AnyKind(kind);
      const answers = [
        checkoutErrorResponse(error, profile, false),
        cardWebhookErrorResponse(error),
        shippingWebhookErrorResponse(error),
        cronErrorResponse(error),
      ];
      for (const answer of answers) expect(answer.status, kind).toBeGreaterThanOrEqual(200);
      if (NOT_SERVICE_FAULTS.includes(kind)) expect(answers[0]!.status, kind).toBeLessThan(500);
      else if (kind !== 'order_not_payable') expect(answers[0]!.status, kind).toBe(500);
    }
  });

  it('a body that did not arrive whole is the caller\'s 400 on the endpoints that read bodies', () => {
    const error = new AnyKind('request_aborted');
    expect(checkoutErrorResponse(error, profile, false)).toEqual({
      status: 400,
      body: { error: 'Invalid request', details: [{ code: 'custom', path: [], message: 'Request body was not received whole' }] },
    });
    expect(cardWebhookErrorResponse(error).status).toBe(400);
    expect(shippingWebhookErrorResponse(error).status).toBe(400);
  });
});

describe('where errors are declared', () => {
  function sources(dir: string): string[] {
    return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
      entry.isDirectory() ? sources(join(dir, entry.name)) : entry.name.endsWith('.ts') ? [join(dir, entry.name)] : [],
    );
  }

  it('every error class of lib/ is in lib/errors.ts, so its kind and its answers are found in one place', () => {
    const elsewhere = sources('lib')
      .filter((file) => file !== join('lib', 'errors.ts'))
      .flatMap((file) =>
        [...readFileSync(file, 'utf8').matchAll(/class\s+(\w+)\s+extends\s+(\w*Error)\b/g)].map((match) => `${file}: ${match[1]}`),
      );
    expect(elsewhere).toEqual([]);
  });
});
