/**
 * GET /api/openapi.json — the service's OpenAPI 3.1 document: docs/openapi.json, which `npm run openapi` generates
 * from the zod schemas that validate the requests (scripts/openapi-document/), and a test holds to them.
 */
import document from '@/docs/openapi.json';

export const runtime = 'nodejs';

export function GET(): Response {
  return Response.json(document, { headers: { 'Cache-Control': 'public, max-age=300' } });
}
