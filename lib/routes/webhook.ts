/**
 * The providers' route family, POST /api/cardprovider/webhook and /api/shipping/webhook: rate limit → the headers'
 * check before a byte of the body is read → raw body (512 KiB at most), kept as bytes for the signature → use case.
 */
import { readBodyText, WEBHOOK_BODY_LIMIT } from '@/lib/http/body';
import type { ErrorResponse } from '@/lib/http/errors';
import { runRoute } from '@/lib/http/route';
import type { RequestContext } from '@/lib/log';
import { getServices, type Services } from '@/lib/services';
import { countRateLimitHit, type RateLimitRule } from '@/lib/shared-state/rate-limit';

/** A use case's answer other than 200 (ShipStation V2's 404 and 400 for an unsigned or badly signed delivery). */
export class WebhookAnswer {
  constructor(
    readonly status: number,
    readonly body: unknown,
  ) {}
}

export interface WebhookRouteOptions<Checked> {
  route: string;
  rule: RateLimitRule;
  /** The provider's answers to errors (lib/http/errors.ts): each provider retries on different statuses. */
  toErrorResponse: (error: unknown, showDetails: boolean) => ErrorResponse;
  /** What the headers must carry, checked before the body is read; its result is handed to `handle`. */
  check: (request: Request, services: Services) => Checked;
  handle: (rawBody: string, checked: Checked, services: Services, context: RequestContext) => Promise<unknown>;
}

export function webhookRoute<Checked>(options: WebhookRouteOptions<Checked>) {
  return async function POST(request: Request): Promise<Response> {
    const run = { route: options.route, request, toErrorResponse: options.toErrorResponse, storeCaller: 'webhook' as const };
    return runRoute(run, async (context) => {
      const services = getServices();
      await countRateLimitHit(services.rateLimiter, options.rule, request.headers, services.config);
      const checked = options.check(request, services);
      const rawBody = await readBodyText(request, WEBHOOK_BODY_LIMIT);
      const result = await options.handle(rawBody, checked, services, context);
      return result instanceof WebhookAnswer ? { status: result.status, body: result.body } : { body: result };
    });
  };
}
