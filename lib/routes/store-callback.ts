/** The store's route family: POST /api/store/* from the companion plugin. */
import type { z } from 'zod';
import { InvalidRequestError, ServiceNotConfiguredError, UnauthorizedError } from '@/lib/errors';
import { CHECKOUT_BODY_LIMIT, parseJson, readBodyText } from '@/lib/http/body';
import { storeCallbackErrorResponse } from '@/lib/http/errors';
import { runRoute } from '@/lib/http/route';
import type { RequestContext } from '@/lib/log';
import { STORE_SIGNATURE_HEADER, storeSignatureProblem } from '@/lib/security/store-signature';
import { getServices, type Services } from '@/lib/services';

export const STORE_CALLBACKS_NOT_CONFIGURED = 'STORE_CALLBACK_SECRET is not set: the service takes no calls from the store';

export interface StoreCallbackRouteOptions<Input> {
  route: string;
  schema: z.ZodType<Input>;
  handle: (input: Input, services: Services, context: RequestContext) => Promise<unknown>;
}

/**
 * The store's calls (docs/decisions.md#d15): 503 without STORE_CALLBACK_SECRET → raw body (32 KiB at most) → signature
 * of the method, path and exact bytes (401) → strict schema (400) → use case. No per-IP rate limit: an unsigned call
 * costs an HMAC and no upstream call.
 */
export function storeCallbackRoute<Input>(options: StoreCallbackRouteOptions<Input>) {
  return async function POST(request: Request): Promise<Response> {
    // A refund or a capture records a payment fact: it shares the webhooks' store slots, kept from a rush of checkouts.
    const run = { route: options.route, request, toErrorResponse: storeCallbackErrorResponse, storeCaller: 'webhook' as const };
    return runRoute(run, async (context) => {
      const services = getServices();
      const secret = services.config.storeCallbackSecret;
      if (!secret) throw new ServiceNotConfiguredError(STORE_CALLBACKS_NOT_CONFIGURED);
      const rawBody = await readBodyText(request, CHECKOUT_BODY_LIMIT);
      // The path the request came to, not a name the route declares: the signature names what this handler does.
      const call = { method: request.method, path: new URL(request.url).pathname, rawBody };
      const problem = storeSignatureProblem(request.headers.get(STORE_SIGNATURE_HEADER), call, secret);
      if (problem !== undefined) {
        context.outcome = `signature_${problem}`;
        throw new UnauthorizedError();
      }
      const parsed = options.schema.safeParse(parseJson(rawBody));
      if (!parsed.success) throw new InvalidRequestError(parsed.error.issues);
      return { body: await options.handle(parsed.data, services, context) };
    });
  };
}
