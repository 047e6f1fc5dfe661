/** The storefront's route family: POST /api/payment-intent and POST /api/submit-order. */
import type { z } from 'zod';
import { configIfValid } from '@/lib/config';
import { InvalidRequestError } from '@/lib/errors';
import { CHECKOUT_BODY_LIMIT, parseJson, readBodyText } from '@/lib/http/body';
import { checkoutErrorResponse, type CheckoutErrorProfile } from '@/lib/http/errors';
import { allowedOrigin, assertAllowedOrigin, corsHeaders, preflightResponse } from '@/lib/http/origin';
import { runRoute } from '@/lib/http/route';
import { REQUEST_ID_HEADER, requestIdFrom, type RequestContext } from '@/lib/log';
import { getServices, type Services } from '@/lib/services';
import { countRateLimitHit, type RateLimitRule } from '@/lib/shared-state/rate-limit';

export interface CheckoutRouteOptions<Input> {
  route: string;
  rule: RateLimitRule;
  profile: CheckoutErrorProfile;
  schema: z.ZodType<Input>;
  handle: (input: Input, services: Services, context: RequestContext) => Promise<unknown>;
}

/**
 * The storefront endpoints (docs/contract.md#spec-4-1, docs/contract.md#spec-4-2): rate limit → origin → body →
 * use case, answering the CORS preflight too.
 */
export function checkoutRoute<Input>(options: CheckoutRouteOptions<Input>) {
  async function POST(request: Request): Promise<Response> {
    // An invalid configuration allows no origin; the handler answers not_configured.
    const origin = allowedOrigin(request.headers, configIfValid()?.allowedOrigins ?? []);
    return runRoute(
      {
        route: options.route,
        request,
        toErrorResponse: (error, showDetails) => checkoutErrorResponse(error, options.profile, showDetails),
        headers: corsHeaders(origin),
        storeCaller: 'checkout',
      },
      async (context) => {
        const services = getServices();
        await countRateLimitHit(services.rateLimiter, options.rule, request.headers, services.config);
        assertAllowedOrigin(request.headers, services.config.allowedOrigins);
        const raw = parseJson(await readBodyText(request, CHECKOUT_BODY_LIMIT));
        const parsed = options.schema.safeParse(raw);
        if (!parsed.success) throw new InvalidRequestError(parsed.error.issues);
        return { body: await options.handle(parsed.data, services, context) };
      },
    );
  }

  async function OPTIONS(request: Request): Promise<Response> {
    const response = preflightResponse(request.headers, configIfValid()?.allowedOrigins ?? []);
    response.headers.set(REQUEST_ID_HEADER, requestIdFrom(request.headers));
    return response;
  }

  return { POST, OPTIONS };
}
