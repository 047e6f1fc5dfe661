/**
 * GET /api/openapi.json — the service's OpenAPI 3.1 document, generated from
 * the same zod schemas that validate the requests (lib/openapi/document.ts).
 */
import { buildOpenApiDocument } from '@/lib/openapi/document';

export const runtime = 'nodejs';

// Built once per instance: the document only changes with the code.
let document: Record<string, unknown> | undefined;

export function GET(): Response {
  document ??= buildOpenApiDocument();
  return Response.json(document, { headers: { 'Cache-Control': 'public, max-age=300' } });
}
